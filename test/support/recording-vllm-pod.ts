import type { IncomingHttpHeaders } from 'node:http'
import { startLocalHttpServer } from './local-http-server.ts'

/** A request the stand-in pod received. */
export interface PodReceived {
  path: string
  headers: IncomingHttpHeaders
  body: { stream?: boolean }
}

/** A stand-in vLLM pod: what it received, and its base URL. */
export interface RecordingVllmPod {
  url: string
  received: PodReceived[]
  close(): Promise<void>
}

/** The usage every answer of the stand-in reports, as vLLM's OpenAI server does. */
export const standInUsage = { prompt: 42, completion: 2, cached: 16 }

const usage = {
  prompt_tokens: standInUsage.prompt,
  completion_tokens: standInUsage.completion,
  total_tokens: standInUsage.prompt + standInUsage.completion,
  prompt_tokens_details: { cached_tokens: standInUsage.cached },
}

/**
 * A pod that records each request's headers and answers chat completions as vLLM does:
 * two tokens, streamed (with the usage chunk last) or whole, with `usage`. `failure` may
 * answer a request with an error status instead (the n-th request it gets, from 0); no
 * answer starts before `gate` resolves (a pod busy with what it has).
 */
export async function startRecordingVllmPod(
  failure: (n: number) => number | null = () => null,
  gate: Promise<void> = Promise.resolve(),
): Promise<RecordingVllmPod> {
  const received: PodReceived[] = []
  const server = await startLocalHttpServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      if (req.url === '/metrics') return void res.writeHead(200).end()
      await gate
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        stream?: boolean
      }
      const n = received.push({ path: req.url ?? '/', headers: req.headers, body }) - 1
      const status = failure(n)
      if (status !== null) {
        res.writeHead(status, { 'content-type': 'application/json' })
        return void res.end(JSON.stringify({ error: { message: 'stand-in failure' } }))
      }
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        const event = (data: object) => res.write(`data: ${JSON.stringify(data)}\n\n`)
        event({ id: 'c1', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] })
        event({ id: 'c1', choices: [{ index: 0, delta: { content: 'one' } }] })
        event({ id: 'c1', choices: [{ index: 0, delta: { content: ' two' } }] })
        event({ id: 'c1', choices: [], usage })
        return void res.end('data: [DONE]\n\n')
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'one two' },
              finish_reason: 'length',
            },
          ],
          usage,
        }),
      )
    })
  })
  return { url: server.url, received, close: () => server.close() }
}
