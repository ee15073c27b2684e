import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { describe, expect, it } from 'vitest'
import { ScorerConfig } from '../../../../control-plane/scorer/scorer-config.ts'
import { startScorer } from '../../../../control-plane/scorer/start-scorer.ts'
import type { LogFields } from '../../../../shared/logging/log.ts'
import {
  createExtProcClient,
  type EnvoyReplayResult,
  type EnvoyResponseReplay,
  replayEnvoy,
} from '../../../support/ext-proc-client.ts'
import {
  type RecordingVllmPod,
  startRecordingVllmPod,
} from '../../../support/recording-vllm-pod.ts'
import { model, poolSpec, secret, until, words } from '../../../support/scorer-stack.ts'
import {
  byName,
  chat,
  edgeSpanId,
  edgeTraceId,
  edgeTraceparent,
  one,
  parentOf,
  traceparentOf,
} from '../../../support/traced-scorer.ts'
import { useScorerStacks } from '../../../support/use-scorer-stacks.ts'

// The Endpoint Picker's pick span and access line: Envoy's request headers carry the
// client's trace context over ext_proc; the pick is a span under it, its stages under the
// pick, and the pod (reached by the gateway, replayed here) gets the pick as its parent.

const stacks = useScorerStacks()

/** A scorer picking for one stand-in pod over plaintext ext_proc; its spans kept in memory. */
async function startEpp(traced: boolean, spec = poolSpec()) {
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  stacks.defer(() => provider.shutdown())
  const pod = stacks.closing(await startRecordingVllmPod())
  const lines: { message: string; fields: LogFields }[] = []
  const scorer = stacks.closing(
    await startScorer(
      ScorerConfig.parse({
        port: 0,
        metricsPort: null,
        signingSecrets: [secret],
        pools: [{ name: 'default', spec }],
        pods: [{ name: 'pod-0', pool: 'default', http: pod.url, events: null, replay: null }],
        epp: { host: '127.0.0.1', port: 0 },
      }),
      (message, fields = {}) => lines.push({ message, fields }),
      undefined,
      { tracer: traced ? provider.getTracer('test') : undefined },
    ),
  )
  const client = createExtProcClient(`127.0.0.1:${scorer.eppPort}`)
  stacks.defer(() => client.close())
  return {
    pod,
    scorer,
    client,
    access: () => lines.filter((line) => line.fields.kind === 'access').map((line) => line.fields),
    spans: async () => {
      await provider.forceFlush()
      return exporter.getFinishedSpans()
    },
  }
}

/**
 * What Envoy does with the routing answer: the client's request, its headers overwritten by
 * the picker's mutations, to the picked endpoint; the pod's answer as the response.
 */
function forwardAsEnvoy(clientHeaders: Record<string, string>) {
  return async (routed: EnvoyReplayResult): Promise<EnvoyResponseReplay> => {
    const endpoint = (routed.destination ?? '').split(',')[0] as string
    const headers: Record<string, string> = { 'content-type': 'application/json', ...clientHeaders }
    for (const [name, value] of Object.entries(routed.setHeaders))
      if (!name.startsWith('x-gateway-') && name !== 'content-length') headers[name] = value
    const answer = await fetch(`http://${endpoint}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: routed.streamedRequestBody,
    })
    const chunks = (await answer.text()).split(/(?<=\n\n)/).filter((event) => event !== '')
    return { status: answer.status, served: endpoint, chunks }
  }
}

/** The header mutations of the routing answer, as Envoy decodes them. */
function mutations(result: EnvoyReplayResult) {
  return result.responses.flatMap(
    (item) => item.response?.request_headers?.response?.header_mutation?.set_headers ?? [],
  )
}

/** A streamed answer as vLLM ends it: a delta, the usage chunk, [DONE]. */
const replaySse = [
  'data: {"choices":[{"index":0,"delta":{"content":"one"}}]}\n\n',
  'data: {"choices":[],"usage":{"prompt_tokens":1500,"completion_tokens":1}}\n\n',
  'data: [DONE]\n\n',
]

const clientHeaders = {
  traceparent: edgeTraceparent,
  tracestate: 'edge=1',
  'x-request-id': 'req-epp',
}

describe('the Endpoint Picker’s trace and access line', () => {
  it('makes a pick span under the request’s traceparent, its stages under it, and hands the pod the pick as its parent', async () => {
    const epp = await startEpp(true)
    const result = await replayEnvoy(epp.client, {
      requestHeaders: clientHeaders,
      body: JSON.stringify(chat(true)),
      response: forwardAsEnvoy(clientHeaders),
    })
    expect(result.grpcError).toBeNull()
    expect(result.echoedResponseBody.toString()).toContain('data: [DONE]')

    const spans = await epp.spans()
    const pick = one(spans, 'kinference.route')
    const pickId = pick.spanContext().spanId
    expect(pick.kind).toBe(SpanKind.SERVER)
    expect(pick.spanContext().traceId).toBe(edgeTraceId)
    expect(parentOf(pick)).toBe(edgeSpanId)
    expect(pick.attributes).toMatchObject({
      'kinference.stage': 'route',
      'kinference.endpoint_picker': true,
      'kinference.request_id': 'req-epp',
      'kinference.outcome': 'picked',
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gen_ai.request.model': model,
      'kinference.pool': 'default',
      'kinference.pod': 'pod-0',
      'kinference.endpoints': [result.destination],
      'kinference.cache.matched_tokens': 0,
    })
    expect(pick.attributes['kinference.prompt_tokens']).toBeGreaterThan(5)
    expect(pick.attributes['kinference.predicted_ttft_ms']).toBeGreaterThan(0)
    expect(pick.status.code).toBe(SpanStatusCode.UNSET)
    for (const stage of ['tokenize', 'index_lookup']) {
      const span = one(spans, `kinference.${stage}`)
      expect(parentOf(span), stage).toBe(pickId)
      expect(span.spanContext().traceId).toBe(edgeTraceId)
      expect(span.attributes['kinference.request_id']).toBe('req-epp')
    }
    // The pick is the EPP's whole part: no pod call of its own, no hold (nothing waited).
    expect(spans.map((span) => span.name).sort()).toEqual([
      'kinference.index_lookup',
      'kinference.route',
      'kinference.tokenize',
    ])

    // The traceparent rides on the header mutations, in their usual form.
    const traceparent = mutations(result).find((option) => option.header.key === 'traceparent')
    expect(traceparent?.append_action).toBe('OVERWRITE_IF_EXISTS_OR_ADD')
    expect(traceparent?.header.raw_value?.toString()).toBe(`00-${edgeTraceId}-${pickId}-01`)
    expect(result.setHeaders.tracestate).toBe('edge=1')
    expect(result.destination).not.toBeNull()
    // vLLM's spans would be children of the pick's.
    const got = traceparentOf(epp.pod as RecordingVllmPod)
    expect(got.traceId).toBe(edgeTraceId)
    expect(got.parentId).toBe(pickId)
    expect(epp.pod.received[0]?.headers.tracestate).toBe('edge=1')

    const access = epp.access()
    expect(access).toHaveLength(1)
    expect(access[0]).toMatchObject({
      level: 'info',
      kind: 'access',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      request_id: 'req-epp',
      model,
      pool: 'default',
      pod: 'pod-0',
      matched_tokens: 0,
      endpoint_picker: true,
      outcome: 'picked',
      trace_id: edgeTraceId,
    })
    expect(access[0]?.prompt_tokens).toBe(pick.attributes['kinference.prompt_tokens'])
    expect(access[0]?.duration_ms).toBeGreaterThanOrEqual(0)
  })

  it('leaves the client’s trace headers alone when tracing is off, and still writes the access line', async () => {
    const epp = await startEpp(false)
    const result = await replayEnvoy(epp.client, {
      requestHeaders: clientHeaders,
      body: JSON.stringify(chat(false)),
      response: forwardAsEnvoy(clientHeaders),
    })
    expect(result.grpcError).toBeNull()
    expect(result.destination).not.toBeNull()
    const keys = mutations(result).map((option) => option.header.key)
    expect(keys).toContain('x-gateway-destination-endpoint')
    expect(keys).not.toContain('traceparent')
    expect(keys).not.toContain('tracestate')
    expect(epp.pod.received[0]?.headers.traceparent).toBe(edgeTraceparent)
    expect(epp.pod.received[0]?.headers.tracestate).toBe('edge=1')
    expect(await epp.spans()).toEqual([])
    const access = epp.access()
    expect(access).toHaveLength(1)
    expect(access[0]).toMatchObject({
      status: 200,
      request_id: 'req-epp',
      pod: 'pod-0',
      endpoint_picker: true,
    })
    expect(access[0]?.trace_id).toBeUndefined()
  })

  it('traces refusals (503 no endpoint, 429 shed) and a request it does not score', async () => {
    const epp = await startEpp(true)
    const outside = await replayEnvoy(epp.client, {
      requestHeaders: { ...clientHeaders, 'x-request-id': 'req-outside' },
      body: JSON.stringify(chat(false)),
      subset: ['10.255.255.1:8000'],
    })
    expect(outside.immediate?.status).toBe(503)
    const hurried = await replayEnvoy(epp.client, {
      requestHeaders: {
        ...clientHeaders,
        'x-request-id': 'req-hurried',
        'x-llm-d-slo-ttft-ms': '1',
      },
      body: JSON.stringify({
        ...chat(false),
        messages: [{ role: 'user', content: words(5, 2_000) }],
      }),
    })
    expect(hurried.immediate?.status).toBe(429)
    const models = await replayEnvoy(epp.client, {
      requestHeaders: {
        ...clientHeaders,
        ':method': 'GET',
        ':path': '/v1/models',
        'x-request-id': 'req-models',
      },
      body: null,
    })
    expect(models.destination).not.toBeNull()

    const spans = await epp.spans()
    const picks = byName(spans, 'kinference.route')
    const byRequest = (id: string) => {
      const found = picks.find((span) => span.attributes['kinference.request_id'] === id)
      if (!found) throw new Error(`no pick span for ${id}`)
      return found
    }
    const unavailable = byRequest('req-outside')
    expect(unavailable.attributes).toMatchObject({
      'kinference.outcome': 'no_endpoint',
      'http.response.status_code': 503,
    })
    expect(unavailable.status.code).toBe(SpanStatusCode.ERROR)
    const shed = byRequest('req-hurried')
    expect(shed.attributes).toMatchObject({
      'kinference.outcome': 'shed',
      'http.response.status_code': 429,
      'gen_ai.request.model': model,
    })
    expect(shed.status.code).toBe(SpanStatusCode.UNSET)
    expect(shed.attributes['kinference.pod']).toBeUndefined()
    const shedChildren = spans.filter((span) => parentOf(span) === shed.spanContext().spanId)
    expect(shedChildren.map((span) => span.name).sort()).toEqual([
      'kinference.index_lookup',
      'kinference.tokenize',
    ])
    const listed = byRequest('req-models')
    expect(listed.attributes).toMatchObject({
      'kinference.outcome': 'picked',
      'http.request.method': 'GET',
      'url.path': '/v1/models',
    })
    expect(spans.filter((span) => parentOf(span) === listed.spanContext().spanId)).toEqual([])
    expect(models.setHeaders.traceparent).toBe(
      `00-${edgeTraceId}-${listed.spanContext().spanId}-01`,
    )
    // A refusal is an ImmediateResponse: no header goes to a pod.
    expect(outside.setHeaders.traceparent).toBeUndefined()

    const access = epp.access()
    expect(access.map((fields) => [fields.request_id, fields.status, fields.outcome])).toEqual([
      ['req-outside', 503, 'no_endpoint'],
      ['req-hurried', 429, 'shed'],
      ['req-models', 200, 'picked'],
    ])
    for (const fields of access) {
      expect(fields.endpoint_picker).toBe(true)
      expect(fields.trace_id).toBe(edgeTraceId)
    }
  })

  it('gives a pick that waited for room its hold span, under the pick', async () => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    // As in scorer-tracing.test.ts: two prompts of ~1,500 tokens in flight fill the pod, and
    // late binding holds the others until the gateway reports the first answers' ends.
    const spec = poolSpec({
      models: [{ name: model, tokenizer: 'qwen3', maxContextTokens: 4096 }],
      scheduler: { numGpuBlocks: 320 },
      routing: { strategy: 'kinference', kinference: { lateBinding: true } },
    } as never)
    const epp = await startEpp(true, spec)
    const replays = Array.from({ length: 4 }, (_, i) =>
      replayEnvoy(epp.client, {
        requestHeaders: { ...clientHeaders, 'x-request-id': `req-held-${i}` },
        body: JSON.stringify({
          model,
          stream: true,
          max_tokens: 8,
          messages: [{ role: 'user', content: words(70 + i, 220) }],
        }),
        // The gateway's answer comes once the gate opens: until then the pod is busy.
        response: async () => {
          await gate
          return { status: 200, served: null, chunks: replaySse }
        },
      }),
    )
    const pool = epp.scorer.pools[0]
    await until(() => (pool?.admission.held ?? 0) >= 1)
    release()
    const results = await Promise.all(replays)
    expect(results.map((result) => result.grpcError)).toEqual([null, null, null, null])
    const spans = await epp.spans()
    const picks = byName(spans, 'kinference.route')
    expect(picks).toHaveLength(4)
    const holds = byName(spans, 'kinference.hold')
    expect(holds.length).toBeGreaterThan(0)
    for (const hold of holds) {
      const id = hold.attributes['kinference.request_id']
      const pick = picks.find((span) => span.attributes['kinference.request_id'] === id)
      expect(parentOf(hold)).toBe(pick?.spanContext().spanId)
      expect(hold.attributes['kinference.hold.outcome']).toBe('dispatched')
      expect(hold.attributes['kinference.hold.held_ms']).toBeGreaterThan(0)
    }
  })
})
