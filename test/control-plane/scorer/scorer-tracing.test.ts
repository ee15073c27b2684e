import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace'
import { describe, expect, it } from 'vitest'
import { type RecordingVllmPod, standInUsage } from '../../support/recording-vllm-pod.ts'
import { routeOnPlatform } from '../../support/route-platform.ts'
import {
  decisionOf,
  fetchSigned,
  model,
  poolSpec,
  until,
  words,
} from '../../support/scorer-stack.ts'
import {
  byName,
  chat,
  edgeSpanId,
  edgeTraceId,
  edgeTraceparent,
  one,
  parentOf,
  requestSpans,
  tracedScorer,
  traceparentOf,
} from '../../support/traced-scorer.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// The scorer's spans (route, tokenize, index_lookup, hold, pod) and the trace context the
// pod gets: the pod's own spans are children of the scorer's pod span.

const stacks = useScorerStacks()

describe('the scorer’s spans of a request the edge decided', () => {
  it.each([true, false])(
    'a route span under the edge’s, its stages under it, the pod call as a GenAI client span (stream %s)',
    async (stream) => {
      const traced = await tracedScorer(stacks)
      const answer = await fetchSigned(
        traced.stack,
        '/v1/chat/completions',
        chat(stream),
        { requestId: 'req-traced' },
        { headers: { traceparent: edgeTraceparent, tracestate: 'edge=1' } },
      )
      expect(answer.status).toBe(200)
      await answer.text()
      const spans = await requestSpans(traced)
      const route = one(spans, 'kinference.route')
      expect(route.kind).toBe(SpanKind.SERVER)
      expect(route.spanContext().traceId).toBe(edgeTraceId)
      expect(parentOf(route)).toBe(edgeSpanId)
      expect(route.attributes).toMatchObject({
        'kinference.stage': 'route',
        'kinference.request_id': 'req-traced',
        'http.response.status_code': 200,
        'kinference.pod': 'pod-0',
      })
      const tokenize = one(spans, 'kinference.tokenize')
      const lookup = one(spans, 'kinference.index_lookup')
      const pod = one(spans, `chat ${model}`)
      for (const [span, stage] of [
        [tokenize, 'tokenize'],
        [lookup, 'index_lookup'],
        [pod, 'pod'],
      ] as const) {
        expect(parentOf(span), stage).toBe(route.spanContext().spanId)
        expect(span.spanContext().traceId).toBe(edgeTraceId)
        expect(span.attributes['kinference.stage']).toBe(stage)
        expect(span.attributes['kinference.request_id']).toBe('req-traced')
      }
      expect(tokenize.attributes['kinference.prompt_tokens']).toBeGreaterThan(5)
      expect(lookup.attributes).toMatchObject({
        'kinference.pool': 'default',
        'kinference.index.pods': 1,
        'kinference.cache.matched_tokens': 0,
      })
      // Nothing waited for room: no hold span.
      expect(byName(spans, 'kinference.hold')).toEqual([])
      const url = new URL(traced.pods[0]?.url ?? '')
      expect(pod.kind).toBe(SpanKind.CLIENT)
      expect(pod.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'vllm',
        'gen_ai.request.model': model,
        'gen_ai.request.max_tokens': 2,
        'gen_ai.request.stream': stream,
        'server.address': '127.0.0.1',
        'server.port': Number(url.port),
        'gen_ai.usage.input_tokens': standInUsage.prompt,
        'gen_ai.usage.output_tokens': standInUsage.completion,
        'gen_ai.usage.cache_read.input_tokens': standInUsage.cached,
        'kinference.pod': 'pod-0',
      })
      if (stream) expect(pod.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0)
      else expect(pod.attributes['gen_ai.response.time_to_first_chunk']).toBeUndefined()
      expect(pod.status.code).toBe(SpanStatusCode.UNSET)
      // The pod's spans are children of the pod span, in the edge's trace.
      const got = traceparentOf(traced.pods[0] as RecordingVllmPod)
      expect(got.traceId).toBe(edgeTraceId)
      expect(got.parentId).toBe(pod.spanContext().spanId)
      expect(traced.pods[0]?.received[0]?.headers.tracestate).toBe('edge=1')
    },
  )

  it('gives each failed attempt its own span, in error, and logs it as a warning', async () => {
    // The first request any pod gets is answered 503: the request is tried on the other pod.
    const traced = await tracedScorer(stacks, { pods: 2, failure: (n) => (n === 0 ? 503 : null) })
    const answer = await fetchSigned(traced.stack, '/v1/chat/completions', chat(false), {
      requestId: 'req-retried',
    })
    expect(answer.status).toBe(200)
    await answer.text()
    const spans = await requestSpans(traced)
    const route = one(spans, 'kinference.route')
    const attempts = byName(spans, `chat ${model}`).sort(
      (a, b) =>
        Number(a.attributes['kinference.attempt']) - Number(b.attributes['kinference.attempt']),
    )
    expect(attempts).toHaveLength(2)
    const [failed, served] = attempts as [ReadableSpan, ReadableSpan]
    expect(failed.status.code).toBe(SpanStatusCode.ERROR)
    expect(failed.attributes['error.type']).toBe('pod-unavailable')
    expect(served.status.code).toBe(SpanStatusCode.UNSET)
    expect(failed.attributes['kinference.pod']).not.toBe(served.attributes['kinference.pod'])
    for (const attempt of attempts) expect(parentOf(attempt)).toBe(route.spanContext().spanId)
    // Each pod got its own attempt's span as its parent.
    const parents = traced.pods.map((pod) => traceparentOf(pod).parentId).sort()
    expect(parents).toEqual(attempts.map((span) => span.spanContext().spanId).sort())
    const warning = traced.lines.find((line) => line.fields.level === 'warn')
    expect(warning?.fields).toMatchObject({ request_id: 'req-retried', cause: 'pod-unavailable' })
    expect(warning?.message).toMatch(/failed before answering/)
  })

  it('traces a route call the same way: route span, stages, the pod call', async () => {
    const traced = await tracedScorer(stacks)
    const answer = await routeOnPlatform(traced.stack, chat(true), { requestId: 'req-route' })
    expect(answer.status).toBe(200)
    const spans = await requestSpans(traced)
    const route = one(spans, 'kinference.route')
    expect(route.attributes).toMatchObject({
      'kinference.request_id': 'req-route',
      'kinference.tenant': 'acme',
      'url.path': '/v1/kinference/route/chat/completions',
    })
    for (const name of ['kinference.tokenize', 'kinference.index_lookup', `chat ${model}`])
      expect(parentOf(one(spans, name)), name).toBe(route.spanContext().spanId)
    // The route call's lookup scores the pool for the policy: its choice is on the span.
    expect(one(spans, 'kinference.index_lookup').attributes['kinference.pod']).toBe('pod-0')
    expect(traceparentOf(traced.pods[0] as RecordingVllmPod).parentId).toBe(
      one(spans, `chat ${model}`).spanContext().spanId,
    )
  })
})

describe('the scorer’s hold span', () => {
  it('is there only for a request that waited for room, with its wait', async () => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    // 320 blocks of 16 tokens: two prompts of ~1,500 tokens in flight fill the pod; late
    // binding holds the others while the pod answers nothing.
    const spec = poolSpec({
      models: [{ name: model, tokenizer: 'qwen3', maxContextTokens: 4096 }],
      scheduler: { numGpuBlocks: 320 },
      routing: { strategy: 'kinference', kinference: { lateBinding: true } },
    } as never)
    const traced = await tracedScorer(stacks, { spec, gate })
    const answers = Array.from({ length: 4 }, (_, i) =>
      fetchSigned(
        traced.stack,
        '/v1/chat/completions',
        {
          model,
          stream: true,
          max_tokens: 8,
          messages: [{ role: 'user', content: words(70 + i, 220) }],
        },
        { requestId: `req-held-${i}` },
      ).then(async (answer) => ({ answer, text: await answer.text() })),
    )
    const pool = traced.stack.scorer.pools[0]
    await until(() => (pool?.admission.held ?? 0) >= 1)
    release()
    const done = await Promise.all(answers)
    expect(done.map(({ answer }) => answer.status)).toEqual([200, 200, 200, 200])
    await until(() => byName(traced.spans(), 'kinference.route').length === 4)
    const spans = traced.spans()
    // The decision header says which requests waited (held_ms above 0): those have a hold span.
    const heldCount = done.filter(
      ({ answer }) => Number(decisionOf(answer.headers).held_ms) > 0,
    ).length
    const holds = byName(spans, 'kinference.hold')
    expect(holds.length).toBeGreaterThan(0)
    expect(holds).toHaveLength(heldCount)
    for (const hold of holds) {
      const id = hold.attributes['kinference.request_id']
      const route = byName(spans, 'kinference.route').find(
        (span) => span.attributes['kinference.request_id'] === id,
      )
      expect(parentOf(hold)).toBe(route?.spanContext().spanId)
      expect(hold.attributes).toMatchObject({
        'kinference.stage': 'hold',
        'kinference.pool': 'default',
        'kinference.hold.outcome': 'dispatched',
      })
      expect(hold.attributes['kinference.hold.held_ms']).toBeGreaterThan(0)
    }
  })
})
