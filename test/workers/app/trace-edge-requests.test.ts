import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import { describe, expect, it } from 'vitest'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../../workers/app/external-providers.ts'
import type { ScorerPort } from '../../../workers/app/scorer-client.ts'
import { useDemoEdgeFixture } from '../../support/demo-edge-fixture.ts'

/**
 * The edge's spans, through the whole app: a request's server span continues the client's
 * trace, each stage has its span under it, the scorer is asked with the policy stage's
 * trace context, and the request span carries the GenAI attributes. Read from the SDK's
 * in-memory exporter (the OTLP path is tested with a collector in test/control-plane).
 */
const demo = useDemoEdgeFixture()
const model = 'qwen3.8-27b-fp8'
const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736'
const clientSpan = '00f067aa0ba902b7'
const traceparent = `00-${clientTrace}-${clientSpan}-01`

const streamed =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":7,"total_tokens":37,"prompt_tokens_details":{"cached_tokens":16}}}\n\n' +
  'data: [DONE]\n\n'

function edge(options: { traced: boolean }) {
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const sentToScorer: Record<string, string>[] = []
  const lines: { message: string; fields: Record<string, unknown> }[] = []
  const served = () => new Response(streamed, { headers: { 'content-type': 'text/event-stream' } })
  const scorer: ScorerPort = {
    route: async (_kind, _bundle, _body, _claims, passHeaders) => {
      sentToScorer.push(passHeaders)
      return { kind: 'served', response: served() }
    },
    forward: async () => served(),
  }
  let clock = 1_800_000_000_000
  const app = createEdgeApp({
    config: async () => demo.snapshot,
    quotas: createMemoryQuotaStore(),
    scorer,
    external: createExternalProviders({
      credentials: () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
    }),
    metrics: createEdgeMetrics(() => 1_700_000_000),
    nowMs: () => clock++,
    sleep: async () => {},
    newRequestId: () => crypto.randomUUID(),
    log: (message, fields = {}) => lines.push({ message, fields }),
    ...(options.traced && { tracer: provider.getTracer('test') }),
  })
  const chat = async (body: object, key = demo.demoKey) => {
    const response = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, traceparent, 'x-request-id': 'req-trace-1' },
      body: JSON.stringify(body),
    })
    return { status: response.status, text: await response.text() }
  }
  return { chat, spans: () => exporter.getFinishedSpans(), sentToScorer, lines }
}

const hello = { model, messages: [{ role: 'user', content: 'hello' }], stream: true }
const named = (spans: ReadableSpan[], name: string) => {
  const span = spans.find((s) => s.name === name)
  if (!span) throw new Error(`no span ${name} in ${spans.map((s) => s.name).join(', ')}`)
  return span
}
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const demoTenant = () => {
  const tenant = demo.snapshot.policies['demo/demo']?.spec.tenants[0]?.name
  if (!tenant) throw new Error('the demo snapshot has no tenant')
  return tenant
}

describe('the edge’s spans', () => {
  it('continue the client’s trace: a server span, one span per stage under it, and the scorer asked as a child of the policy stage', async () => {
    const { chat, spans, sentToScorer } = edge({ traced: true })
    expect((await chat(hello)).status).toBe(200)
    const all = spans()
    const root = named(all, 'POST /v1/chat/completions')
    expect(root.kind).toBe(SpanKind.SERVER)
    expect(root.spanContext().traceId).toBe(clientTrace)
    expect(parentOf(root)).toBe(clientSpan)
    for (const stage of ['auth', 'read', 'quota', 'policy', 'serve']) {
      const span = named(all, `kinference.${stage}`)
      expect(span.attributes['kinference.stage']).toBe(stage)
      expect(parentOf(span), stage).toBe(root.spanContext().spanId)
    }
    // The PII scan runs inside the read stage.
    expect(parentOf(named(all, 'kinference.pii'))).toBe(
      named(all, 'kinference.read').spanContext().spanId,
    )
    const policy = named(all, 'kinference.policy')
    expect(sentToScorer[0]?.traceparent).toBe(`00-${clientTrace}-${policy.spanContext().spanId}-01`)
    expect(policy.attributes['kinference.decision']).toBe('served_by_scorer')
  })

  it('end the request span with the answer, carrying the GenAI attributes of what it used', async () => {
    const { chat, spans } = edge({ traced: true })
    await chat(hello)
    const root = named(spans(), 'POST /v1/chat/completions')
    expect(root.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': model,
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 16,
      'kinference.request_id': 'req-trace-1',
      'kinference.tenant': demoTenant(),
    })
    expect(root.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0)
  })

  it('mark a refused key’s request: 401 on the server span (not an error), the auth span failed', async () => {
    const { chat, spans } = edge({ traced: true })
    expect((await chat(hello, 'sk-not-a-key')).status).toBe(401)
    const all = spans()
    const root = named(all, 'POST /v1/chat/completions')
    expect(root.attributes['http.response.status_code']).toBe(401)
    expect(root.status.code).toBe(SpanStatusCode.UNSET)
    expect(named(all, 'kinference.auth').status.code).toBe(SpanStatusCode.ERROR)
    expect(all.find((s) => s.name === 'kinference.read')).toBeUndefined()
  })

  it('are not made when tracing is off, and the client’s trace context reaches the scorer unchanged', async () => {
    const { chat, spans, sentToScorer } = edge({ traced: false })
    expect((await chat(hello)).status).toBe(200)
    expect(spans()).toEqual([])
    expect(sentToScorer[0]?.traceparent).toBe(traceparent)
  })
})

describe('the edge’s access log', () => {
  it('writes one info line per request when its answer ends, with its id, status, tokens and trace', async () => {
    const { chat, lines } = edge({ traced: true })
    await chat(hello)
    await chat(hello, 'sk-not-a-key')
    const access = lines.filter((line) => line.fields.kind === 'access')
    expect(access).toHaveLength(2)
    expect(access[0]?.fields).toMatchObject({
      level: 'info',
      request_id: 'req-trace-1',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      tenant: demoTenant(),
      model,
      prompt_tokens: 30,
      completion_tokens: 7,
      cached_tokens: 16,
      complete: true,
      trace_id: clientTrace,
    })
    expect(access[0]?.fields.ttft_ms).toBeTypeOf('number')
    expect(access[1]?.fields).toMatchObject({ status: 401, request_id: 'req-trace-1' })
  })
})
