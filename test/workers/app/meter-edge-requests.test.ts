import { describe, expect, it } from 'vitest'
import { parsePrometheusText } from '../../../control-plane/metrics/parse-prometheus-text.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { QuotaStore } from '../../../shared/quota/quota-store.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../../workers/app/external-providers.ts'
import type { ScorerPort } from '../../../workers/app/scorer-client.ts'
import { useDemoEdgeFixture } from '../../support/demo-edge-fixture.ts'

/**
 * The edge's per-request series, through the whole app: every answer counted once by
 * tenant, model and status, the errors the edge raises itself included; tokens and
 * latencies of answered requests; labels bounded whatever model names clients send.
 */
const demo = useDemoEdgeFixture()
const model = 'qwen3.8-27b-fp8'

const streamed =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n' +
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":7,"total_tokens":37}}\n\n' +
  'data: [DONE]\n\n'

function edge(
  options: { quotas?: QuotaStore; tokensPerMinute?: number; failClose?: boolean } = {},
) {
  const served = () => new Response(streamed, { headers: { 'content-type': 'text/event-stream' } })
  const scorer: ScorerPort = {
    route: async () => ({ kind: 'served', response: served() }),
    forward: async () => served(),
  }
  const snapshot = structuredClone(demo.snapshot)
  const tenant = snapshot.policies['demo/demo']?.spec.tenants[0]
  if (!tenant) throw new Error('the demo snapshot has no tenant')
  if (options.tokensPerMinute !== undefined || options.failClose)
    tenant.quotas = {
      ...(options.tokensPerMinute === undefined ? { requestsPerMinute: 100 } : {}),
      ...(options.tokensPerMinute === undefined
        ? {}
        : { tokensPerMinute: options.tokensPerMinute }),
      failureMode: 'FailClose',
    }
  const metrics = createEdgeMetrics(() => 1_700_000_000)
  let clock = 1_800_000_000_000
  const app = createEdgeApp({
    config: async () => snapshot,
    quotas: options.quotas ?? createMemoryQuotaStore(),
    scorer,
    external: createExternalProviders({
      credentials: () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
    }),
    metrics,
    // Each reading a millisecond later: latencies are positive, quotas barely refill.
    nowMs: () => clock++,
    sleep: async () => {},
    newRequestId: () => crypto.randomUUID(),
    log: () => {},
  })
  const send = async (path: string, init: RequestInit = {}, key = demo.demoKey) =>
    app.request(path, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
    })
  const chat = (body: object) =>
    send('/v1/chat/completions', { method: 'POST', body: JSON.stringify(body) }).then(
      async (response) => ({ status: response.status, text: await response.text() }),
    )
  /** The samples of one family, as `labels value` strings. */
  const series = (name: string) =>
    parsePrometheusText(metrics.render())
      .samples.filter((sample) => sample.name === name)
      .map((sample): Record<string, string | number> => ({ ...sample.labels, value: sample.value }))
  return { send, chat, series, tenant: tenant.name }
}

const hello = { model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 }

describe('the edge’s request counter', () => {
  it('counts the errors the edge raises itself: 401, 404, 400, 429 and 503', async () => {
    const { send, chat, series, tenant } = edge({ tokensPerMinute: 200 })
    expect((await send('/v1/models', {}, 'sk-not-a-key')).status).toBe(401)
    expect((await send('/v1/nothing', { method: 'POST' })).status).toBe(404)
    expect((await chat({ messages: [] })).status).toBe(400)
    // Admitted on its estimate (prompt + 8), then 1 000 reserved: over 200 tokens a minute.
    expect((await chat(hello)).status).toBe(200)
    expect((await chat({ ...hello, max_tokens: 1_000 })).status).toBe(429)
    const failing: QuotaStore = {
      admit: async () => {
        throw new Error('the quota store is down')
      },
      settle: async () => {},
    }
    const closed = edge({ quotas: failing, failClose: true })
    expect((await closed.chat(hello)).status).toBe(503)

    const statuses = series('kinference_edge_requests_total')
    expect(statuses).toEqual(
      expect.arrayContaining([
        { tenant: 'none', model: 'none', status: '401', value: 1 },
        // No route authenticates an unknown path.
        { tenant: 'none', model: 'none', status: '404', value: 1 },
        { tenant, model: 'none', status: '400', value: 1 },
        { tenant, model, status: '200', value: 1 },
        { tenant, model, status: '429', value: 1 },
      ]),
    )
    expect(statuses).toHaveLength(5)
    expect(closed.series('kinference_edge_requests_total')).toEqual([
      { tenant, model, status: '503', value: 1 },
    ])
  })

  it('counts each answer once, and not a health probe', async () => {
    const { send, chat, series } = edge()
    expect((await send('/healthz')).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await chat(hello)).status).toBe(200)
    expect(series('kinference_edge_requests_total').map(({ value }) => value)).toEqual([3])
  })

  it('labels any model the tenant’s policy does not list as other: one series, however many names', async () => {
    const { chat, series, tenant } = edge()
    for (let i = 0; i < 20; i++) await chat({ ...hello, model: `made-up-${i}-${'x'.repeat(i)}` })
    const models = new Set(series('kinference_edge_requests_total').map((s) => s.model))
    expect(models).toEqual(new Set(['other']))
    expect(series('kinference_edge_requests_total')[0]).toMatchObject({ tenant, value: 20 })
  })
})

describe('the edge’s tokens and latencies by tenant and model', () => {
  it('adds a stream’s usage, and observes its TTFT and end to end once it is read', async () => {
    const { chat, series, tenant } = edge()
    const answer = await chat({ ...hello, stream: true })
    expect(answer.status).toBe(200)
    // The client did not ask for usage: its stream has none, the counters still do.
    expect(answer.text).not.toContain('"usage"')
    expect(series('kinference_edge_prompt_tokens_total')).toEqual([{ tenant, model, value: 30 }])
    expect(series('kinference_edge_completion_tokens_total')).toEqual([{ tenant, model, value: 7 }])
    for (const name of ['kinference_edge_ttft_seconds_count', 'kinference_edge_e2e_seconds_count'])
      expect(series(name), name).toEqual([{ tenant, model, value: 1 }])
  })

  it('adds a JSON answer’s usage and its end to end; no TTFT for an answer in one piece', async () => {
    const { chat, series, tenant } = edge()
    const answer = await chat(hello)
    expect(JSON.parse(answer.text).usage).toMatchObject({ prompt_tokens: 30 })
    expect(series('kinference_edge_prompt_tokens_total')).toEqual([{ tenant, model, value: 30 }])
    expect(series('kinference_edge_completion_tokens_total')).toEqual([{ tenant, model, value: 7 }])
    expect(series('kinference_edge_e2e_seconds_count')).toEqual([{ tenant, model, value: 1 }])
    expect(series('kinference_edge_ttft_seconds_count')).toEqual([])
  })

  it('adds nothing for a refused request', async () => {
    const { chat, series } = edge()
    expect((await chat({ ...hello, max_tokens: 'many' })).status).toBe(400)
    expect(series('kinference_edge_prompt_tokens_total')).toEqual([])
    expect(series('kinference_edge_e2e_seconds_count')).toEqual([])
  })
})
