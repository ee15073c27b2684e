import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChaosClient } from '../../../../control-plane/lab/chaos/chaos-client.ts'
import { chaosRequest } from '../../../../control-plane/lab/chaos/chaos-traffic.ts'

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const sse = (res: ServerResponse) =>
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'x-kinference-decision': 'pool=p; pod=pod-a',
  })

/** Answers as a healthy or a broken gateway would, chosen by the model's name. */
const behaviours: Record<string, (res: ServerResponse) => void> = {
  whole: (res) => {
    sse(res)
    res.write(chunk({ role: 'assistant', content: '' }))
    res.write(chunk({ content: 'Hi' }))
    res.write(chunk({}, 'stop'))
    res.end('data: [DONE]\n\n')
  },
  'error-event': (res) => {
    sse(res)
    res.write(chunk({ content: 'Hi' }))
    res.end(
      `data: ${JSON.stringify({ error: { message: 'pod died', type: 'server_error', code: 'upstream_error' } })}\n\ndata: [DONE]\n\n`,
    )
  },
  truncated: (res) => {
    sse(res)
    res.write(chunk({ content: 'Hi' }))
    setTimeout(() => res.socket?.destroy(), 20)
  },
  'no-done': (res) => {
    sse(res)
    res.end(chunk({ content: 'Hi' }))
  },
  hang: (res) => {
    sse(res)
    res.write(chunk({ content: 'Hi' }))
  },
  'bare-503': (res) => res.writeHead(503).end(),
  'openai-429': (res) =>
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' }).end(
      JSON.stringify({
        error: {
          message: 'slow down',
          type: 'rate_limit_error',
          param: null,
          code: 'rate_limit_exceeded',
        },
      }),
    ),
}

let url = ''
const server = createServer((req, res) => {
  let body = ''
  req.on('data', (part) => {
    body += part
  })
  req.on('end', () => behaviours[JSON.parse(body).model as string]?.(res))
})
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const send = (model: string, timeoutMs = 5_000) =>
  createChaosClient({ baseUrl: url, apiKey: 'k', nowMs: () => performance.now() }).send(
    chaosRequest([{ role: 'user', content: 'hi' }], { model, timeoutMs }),
  )

describe('the chaos client tells outcomes apart', () => {
  it('a whole stream is completed, with the pod the decision names', async () => {
    expect(await send('whole')).toMatchObject({ kind: 'completed', status: 200, pod: 'pod-a' })
  })

  it('an error event is a clean error', async () => {
    expect(await send('error-event')).toMatchObject({ kind: 'clean-error', code: 'upstream_error' })
  })

  it('an OpenAI-shaped 429 is a clean error with its Retry-After', async () => {
    expect(await send('openai-429')).toMatchObject({
      kind: 'clean-error',
      status: 429,
      code: 'rate_limit_exceeded',
      retryAfter: '3',
    })
  })

  it.each(['truncated', 'no-done', 'bare-503'])('%s is lost', async (model) => {
    expect((await send(model)).kind).toBe('lost')
  })

  it('a stream that stops sending is lost at the timeout', async () => {
    const outcome = await send('hang', 300)
    expect(outcome).toMatchObject({ kind: 'lost' })
    expect(outcome.kind === 'lost' && outcome.why).toMatch(/hang/)
  })
})
