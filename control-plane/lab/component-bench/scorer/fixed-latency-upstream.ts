import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'

/**
 * A stand-in for a vLLM pod with constant timing, for measuring what the scorer adds:
 * every chat request streams its first token after --first-token-ms, then --tokens more
 * every --itl-ms, then [DONE]. Run as its own process by the proxy benchmark; prints the
 * ports it listens on as one JSON line.
 */
const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '3' },
    'first-token-ms': { type: 'string', default: '50' },
    tokens: { type: 'string', default: '20' },
    'itl-ms': { type: 'string', default: '10' },
  },
})
const firstTokenMs = Number(values['first-token-ms'])
const tokens = Number(values.tokens)
const itlMs = Number(values['itl-ms'])
const chunk = (text: string) =>
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{"content":"${text}"},"logprobs":null,"finish_reason":null}]}\n\n`

const ports: number[] = []
for (let i = 0; i < Number(values.pods); i++) {
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(req.url === '/metrics' ? 200 : 404).end()
      return
    }
    req.resume()
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      let sent = 0
      const next = () => {
        if (res.destroyed) return
        if (sent === tokens) {
          res.end('data: [DONE]\n\n')
          return
        }
        res.write(chunk(` w${sent++}`))
        setTimeout(next, itlMs)
      }
      setTimeout(next, firstTokenMs)
    })
  })
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  ports.push((server.address() as AddressInfo).port)
}
process.stdout.write(`${JSON.stringify(ports)}\n`)
