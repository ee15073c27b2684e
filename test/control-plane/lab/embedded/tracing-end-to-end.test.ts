import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import {
  type RunningTracing,
  startTracing,
} from '../../../../control-plane/tracing/start-tracing.ts'
import { client, start } from '../../../support/embedded-stack.ts'
import type { CollectedSpan } from '../../../support/otlp-collector.ts'
import { type OtlpCollector, startOtlpCollector } from '../../../support/otlp-collector.ts'

/**
 * One request's trace across the edge and the scorer, as a collector receives it over
 * OTLP/HTTP from both services (each its own service.name and exporter): one trace id, the
 * scorer's span a child of the edge's, the stages' spans, and the GenAI attributes on the
 * request and on the pod call. The collector decodes the protobuf with the official
 * .proto files (test/fixtures/opentelemetry-proto), not the exporter's code.
 */
let collector: OtlpCollector
let tracing: RunningTracing[] = []
let stack: EmbeddedStack
const model = 'qwen3.8-27b-fp8'

beforeAll(async () => {
  collector = await startOtlpCollector()
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }
  const edge = startTracing(env, { serviceName: 'kinference-edge' })
  const scorer = startTracing(env, { serviceName: 'kinference-scorer' })
  tracing = [edge, scorer]
  stack = await start({ tracers: { edge: edge.tracer, scorer: scorer.tracer } })
})

afterAll(async () => {
  await stack?.close()
  for (const each of tracing) await each.shutdown()
  await collector?.close()
})

const find = (spans: CollectedSpan[], service: string, name: string) =>
  spans.find((span) => span.serviceName === service && span.name === name)

describe('a request’s trace across the edge and the scorer', () => {
  it('reaches the collector as one trace, with the stages and the GenAI attributes', async () => {
    const stream = await client(stack).chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Tell me about prefix caching.' }],
      max_tokens: 16,
      stream: true,
    })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
    expect(text.length).toBeGreaterThan(0)
    for (const each of tracing) await each.flush()
    const spans = await collector.waitForSpans(
      (all) =>
        find(all, 'kinference-edge', 'POST /v1/chat/completions') !== undefined &&
        find(all, 'kinference-scorer', `chat ${model}`) !== undefined,
      10_000,
    )
    const root = find(spans, 'kinference-edge', 'POST /v1/chat/completions')
    const policy = find(spans, 'kinference-edge', 'kinference.policy')
    const route = find(spans, 'kinference-scorer', 'kinference.route')
    const pod = find(spans, 'kinference-scorer', `chat ${model}`)
    if (!root || !policy || !route || !pod) throw new Error('a span is missing')
    // One trace: the scorer's request span is a child of the edge's policy stage.
    const trace = spans.filter((span) => span.traceId === root.traceId)
    expect(new Set(trace.map((span) => span.serviceName))).toEqual(
      new Set(['kinference-edge', 'kinference-scorer']),
    )
    expect(route.parentSpanId).toBe(policy.spanId)
    for (const stage of ['auth', 'read', 'pii', 'quota', 'policy'])
      expect(
        trace.some((span) => span.attributes['kinference.stage'] === stage),
        stage,
      ).toBe(true)
    for (const stage of ['tokenize', 'index_lookup', 'pod'])
      expect(
        trace.some(
          (span) =>
            span.serviceName === 'kinference-scorer' &&
            span.attributes['kinference.stage'] === stage,
        ),
        stage,
      ).toBe(true)
    // The GenAI conventions: on the edge's request span and on the scorer's pod call.
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': model,
      'http.response.status_code': 200,
    })
    expect(root.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0)
    expect(root.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0)
    expect(root.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0)
    expect(pod.kind).toBe(3) // SPAN_KIND_CLIENT
    expect(pod.attributes).toMatchObject({ 'gen_ai.request.model': model })
    expect(pod.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0)
    expect(pod.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0)
  })
})
