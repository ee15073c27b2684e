import { describe, expect, it } from 'vitest'
import type { EdgeClaims } from '../../shared/auth/edge-signature.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { createMemoryQuotaStore } from '../../shared/quota/memory-quota-store.ts'
import { createEdgeApp } from '../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../workers/app/external-providers.ts'
import type { ScorerPort } from '../../workers/app/scorer-client.ts'
import { useDemoEdgeFixture } from '../support/demo-edge-fixture.ts'

/**
 * What the edge does with hostile or careless requests before anything is served: the
 * request id it passes on and echoes, the quota estimate (tools counted, `n` multiplied),
 * the body depth, and the errors for what only an external provider could have served.
 * The scorer is replaced at its port (ScorerPort) by one that records what reached it and
 * serves a fixed answer.
 */
const demo = useDemoEdgeFixture()

interface Reached {
  claims: EdgeClaims
  headers: Record<string, string>
  body: string
}

function edge(options: { tokensPerMinute?: number } = {}) {
  const reached: Reached[] = []
  const served = () =>
    new Response(
      'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}\n\ndata: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\ndata: [DONE]\n\n',
      {
        headers: {
          'content-type': 'text/event-stream',
          'x-kinference-decision': 'pool=demo/sim-27b pod=sim-pod-0 predicted_ttft_ms=12',
          'x-kinference-reason': 'best of 2 pods',
        },
      },
    )
  const scorer: ScorerPort = {
    async route(_kind, _bundle, body, claims, headers) {
      reached.push({ claims, headers, body })
      return { kind: 'served', response: served() }
    },
    async forward(_path, body, claims, headers) {
      reached.push({ claims, headers, body })
      return served()
    },
  }
  const snapshot = structuredClone(demo.snapshot)
  const tenant = snapshot.policies['demo/demo']?.spec.tenants[0]
  if (tenant && options.tokensPerMinute !== undefined)
    tenant.quotas = { tokensPerMinute: options.tokensPerMinute, failureMode: 'FailClose' }
  const app = createEdgeApp({
    config: async () => snapshot,
    quotas: createMemoryQuotaStore(),
    scorer,
    external: createExternalProviders({
      credentials: () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
    }),
    metrics: createEdgeMetrics(),
    // A stopped clock: quota buckets do not refill between a test's requests.
    nowMs: () => 1_800_000_000_000,
    sleep: async () => {},
    newRequestId: () => crypto.randomUUID(),
    log: () => {},
  })
  const post = (
    body: unknown,
    headers: Record<string, string> = {},
    path = '/v1/chat/completions',
  ) =>
    app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.demoKey}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
  return { post, reached, snapshot }
}

const chat = (extra: object = {}) => ({
  model: 'qwen3.8-27b-fp8',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 8,
  ...extra,
})
const errorOf = async (response: Response) =>
  (
    (await response.json()) as {
      error: { code: string; type: string; param: string | null; message: string }
    }
  ).error

describe('the request id', () => {
  it('passes a sane client id on and echoes it; the scorer keys on the edge’s own', async () => {
    const { post, reached } = edge()
    const response = await post(chat(), { 'x-request-id': 'client-abc-123' })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toBe('client-abc-123')
    expect(reached[0]?.headers['x-request-id']).toBe('client-abc-123')
    expect(reached[0]?.claims.requestId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('replaces a 32 KiB id, or one with control characters, by its own, everywhere', async () => {
    const { post, reached } = edge()
    for (const hostile of ['x'.repeat(32 * 1024 - 200), 'evil\u009b31mred', 'has space']) {
      const before = reached.length
      const response = await post(chat(), { 'x-request-id': hostile })
      expect(response.status).toBe(200)
      const own = reached[before]?.claims.requestId
      expect(own).toMatch(/^[0-9a-f-]{36}$/)
      expect(reached[before]?.headers['x-request-id']).toBe(own)
      expect(response.headers.get('x-request-id')).toBe(own)
    }
  })

  it('gives two tenants sending one id two different ids of the edge’s', async () => {
    const { post, reached } = edge()
    await post(chat(), { 'x-request-id': 'same' })
    await post(chat(), { 'x-request-id': 'same' })
    expect(reached[0]?.claims.requestId).not.toBe(reached[1]?.claims.requestId)
  })
})

describe('the routing headers', () => {
  it('reach a tenant whose policy shows them (the demo) and no other', async () => {
    const visible = edge()
    const shown = await visible.post(chat())
    expect(shown.headers.get('x-kinference-decision')).toContain('pod=sim-pod-0')
    const hidden = edge()
    const tenant = hidden.snapshot.policies['demo/demo']?.spec.tenants[0]
    if (tenant) tenant.decisionHeaders = 'Hidden'
    const answer = await hidden.post(chat())
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-kinference-decision')).toBeNull()
    expect(answer.headers.get('x-kinference-reason')).toBeNull()
  })
})

describe('the quota estimate', () => {
  // A request larger than the whole quota is admitted only on an unused quota: the first,
  // small, request of each test uses a little of it (the clock is stopped: no refill).
  it('counts the tool definitions a request sends', async () => {
    const { post, reached } = edge({ tokensPerMinute: 3_000 })
    expect((await post(chat())).status).toBe(200)
    const description = 'Looks the weather up for a city and a date. '.repeat(800)
    const tools = [{ type: 'function', function: { name: 'weather', description } }]
    const response = await post(chat({ tools }))
    expect(response.status).toBe(429)
    const error = await errorOf(response)
    expect(error.code).toBe('tokens_per_minute')
    expect(error.message).toMatch(/this request's \d{4,} tokens exceed the quota of 3000/)
    expect(reached).toHaveLength(1)
  })

  it('holds a tool description past the context to context_length_exceeded', async () => {
    const description = 'Looks the weather up for a city and a date. '.repeat(4_000)
    const tools = [{ type: 'function', function: { name: 'weather', description } }]
    const response = await edge().post(chat({ tools }))
    expect(response.status).toBe(400)
    expect((await errorOf(response)).code).toBe('context_length_exceeded')
  })

  it('reserves max_tokens for each of the n choices', async () => {
    const { post } = edge({ tokensPerMinute: 3_000 })
    expect((await post(chat())).status).toBe(200)
    const refused = await post(chat({ max_tokens: 1_000, n: 4 }))
    expect(refused.status).toBe(429)
    expect((await errorOf(refused)).message).toMatch(/this request's 400\d tokens exceed the quota/)
    expect((await post(chat({ max_tokens: 1_000, n: 2 }))).status).toBe(200)
  })

  it('refuses more choices than it serves', async () => {
    const response = await edge().post(chat({ n: 129 }))
    expect(response.status).toBe(400)
    expect((await errorOf(response)).param).toBe('n')
  })
})

describe('a body nested deeper than 64 levels', () => {
  it('is refused with a 400 naming the field, whatever field holds it', async () => {
    const { post, reached } = edge()
    const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`
    const body = JSON.stringify(chat()).replace(/}$/, `,"metadata":${deep}}`)
    const response = await post(body)
    expect(response.status).toBe(400)
    expect(await errorOf(response)).toMatchObject({
      code: 'invalid_request',
      param: 'metadata.a.a',
    })
    expect(reached).toHaveLength(0)
  })
})

describe('what only Bedrock serves, asked the way only vLLM takes', () => {
  it('answers 400, not a retryable 503, to continue_final_message on a user turn', async () => {
    const response = await edge().post({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'Once upon a time' }],
      continue_final_message: true,
      add_generation_prompt: false,
    })
    expect(response.status).toBe(400)
    const error = await errorOf(response)
    expect(error.type).toBe('invalid_request_error')
    expect(error.message).toContain('continue only a final assistant message')
  })

  it('answers 400 to /v1/completions for a Bedrock model', async () => {
    const response = await edge().post(
      { model: 'claude-sonnet', prompt: 'Once upon a time', max_tokens: 8 },
      {},
      '/v1/completions',
    )
    expect(response.status).toBe(400)
    expect((await errorOf(response)).message).toContain('chat completions only')
  })

  it('still answers 503 when the pool is merely unreachable for a model that bursts', async () => {
    const down = createEdgeApp({
      config: async () => demo.snapshot,
      quotas: createMemoryQuotaStore(),
      scorer: {
        route: () => Promise.reject(new KinfError('upstream_unavailable', 'down')),
        forward: () => Promise.reject(new KinfError('upstream_unavailable', 'down')),
      },
      external: createExternalProviders({ credentials: () => undefined }),
      metrics: createEdgeMetrics(),
      nowMs: () => Date.now(),
      sleep: async () => {},
      newRequestId: () => crypto.randomUUID(),
      log: () => {},
    })
    const response = await down.request('/v1/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.demoKey}` },
      body: JSON.stringify({ model: 'qwen3.8-27b-fp8', prompt: 'x', max_tokens: 4 }),
    })
    expect(response.status).toBe(503)
  })
})
