import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  instrumentationScopeName,
  type RunningTracing,
  startTracing,
} from '../../../control-plane/tracing/start-tracing.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { genAiRequestAttributes } from '../../../shared/tracing/gen-ai-attributes.ts'
import { inSpan } from '../../../shared/tracing/in-span.ts'
import { stageAttribute } from '../../../shared/tracing/stage-spans.ts'
import { contextOfHeaders } from '../../../shared/tracing/trace-context.ts'
import type { TracedService } from '../../../workers/worker/tracer-provider-of.ts'
import { type OtlpCollector, startOtlpCollector } from '../../support/otlp-collector.ts'

const edge = { serviceName: 'kinference-edge', serviceVersion: '1.2.3' }
/** Generous: the export crosses loopback, on busy machines too. */
const arrival = 10_000

let collector: OtlpCollector
let running: RunningTracing | undefined

beforeEach(async () => {
  collector = await startOtlpCollector()
})

afterEach(async () => {
  await running?.shutdown()
  running = undefined
  await collector.close()
})

function start(env: Record<string, string>, defaults: TracedService = edge) {
  running = startTracing(env, defaults)
  return running
}

/** A server span with a child run by inSpan and one that fails, as the edge makes them. */
async function requestSpans(tracing: RunningTracing, parent = ROOT_CONTEXT) {
  const tracer = tracing.tracer
  if (!tracer) throw new Error('tracing is off')
  const root = tracer.startSpan(
    'kinference.request',
    {
      kind: SpanKind.SERVER,
      attributes: {
        [stageAttribute]: 'request',
        ...genAiRequestAttributes({ operation: 'chat', model: 'qwen3-8b', maxTokens: 64 }),
      },
    },
    parent,
  )
  const scope = { tracer, parent: trace.setSpan(parent, root) }
  await inSpan(scope, 'kinference.route', { attributes: { [stageAttribute]: 'route' } }, () => 1)
  await inSpan(scope, 'chat qwen3-8b', { kind: SpanKind.CLIENT }, () => {
    throw new Error('pod refused')
  }).catch(() => {})
  root.end()
  return root
}

describe('startTracing with an OTLP collector', () => {
  it('exports a request span and its children, with the resource and the scope', async () => {
    const tracing = start({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url })
    const root = await requestSpans(tracing)
    await tracing.flush()
    const spans = await collector.waitForSpans((all) => all.length >= 3, arrival)

    const { traceId, spanId } = root.spanContext()
    const byName = new Map(spans.map((span) => [span.name, span]))
    const request = byName.get('kinference.request')
    expect(request).toMatchObject({
      traceId,
      spanId,
      parentSpanId: '',
      kind: 2,
      serviceName: 'kinference-edge',
      scopeName: instrumentationScopeName,
      scopeVersion: '1.2.3',
      attributes: {
        'kinference.stage': 'request',
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'qwen3-8b',
        'gen_ai.request.max_tokens': 64,
      },
    })
    expect(request?.resourceAttributes).toMatchObject({
      'service.name': 'kinference-edge',
      'service.version': '1.2.3',
      'telemetry.sdk.language': 'nodejs',
    })
    expect(request && request.endNs >= request.startNs && request.startNs > 0n).toBe(true)
    expect(byName.get('kinference.route')).toMatchObject({
      traceId,
      parentSpanId: spanId,
      kind: 1,
      attributes: { 'kinference.stage': 'route' },
      status: { code: 0, message: '' },
    })
    expect(byName.get('chat qwen3-8b')).toMatchObject({
      traceId,
      parentSpanId: spanId,
      kind: 3,
      status: { code: 2, message: 'pod refused' },
    })
    expect(collector.requests().every((r) => r.contentType === 'protobuf')).toBe(true)
  })

  it('continues the trace a traceparent header names (parent-based sampling)', async () => {
    const tracing = start({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url })
    const headers: Record<string, string> = {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    }
    await requestSpans(
      tracing,
      contextOfHeaders((name) => headers[name]),
    )
    await tracing.flush()
    const spans = await collector.waitForSpans((all) => all.length >= 3, arrival)
    expect(spans.find((span) => span.name === 'kinference.request')).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: 'b7ad6b7169203331',
    })
  })

  it('sends the OTEL_EXPORTER_OTLP_HEADERS, gzipped when asked, to the traces endpoint', async () => {
    const tracing = start({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20t0ken,x-scope=edge',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
    })
    await requestSpans(tracing)
    await tracing.flush()
    await collector.waitForSpans((all) => all.length >= 3, arrival)
    const [request] = collector.requests()
    expect(request?.headers).toMatchObject({
      authorization: 'Bearer t0ken',
      'x-scope': 'edge',
      'content-encoding': 'gzip',
    })
  })

  it('names the service and resource as OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES say', async () => {
    const tracing = start(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: 'scorer-eu-1',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=overridden,deployment.environment.name=prod',
      },
      { serviceName: 'kinference-scorer' },
    )
    await requestSpans(tracing)
    await tracing.flush()
    const [span] = await collector.waitForSpans((all) => all.length >= 3, arrival)
    expect(span?.serviceName).toBe('scorer-eu-1')
    expect(span?.resourceAttributes).toMatchObject({ 'deployment.environment.name': 'prod' })
    expect(span?.resourceAttributes).not.toHaveProperty('service.version')
  })

  it('sends nothing when the sampler is always_off', async () => {
    const tracing = start({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_TRACES_SAMPLER: 'always_off',
    })
    const root = await requestSpans(tracing)
    expect(root.isRecording()).toBe(false)
    await tracing.flush()
    await tracing.shutdown()
    expect(collector.requests()).toEqual([])
  })

  it('leaves the global tracer provider alone', async () => {
    const tracing = start({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url })
    const global = trace.getTracer('someone-else').startSpan('global')
    expect(global.isRecording()).toBe(false)
    global.end()
    expect(tracing.tracer?.startSpan('own').isRecording()).toBe(true)
  })
})

describe('startTracing when off', () => {
  it('is off by default: no tracer, and flush and shutdown do nothing', async () => {
    const tracing = start({})
    expect(tracing.tracer).toBeUndefined()
    await expect(tracing.flush()).resolves.toBeUndefined()
    await expect(tracing.shutdown()).resolves.toBeUndefined()
  })

  it('sends nothing with OTEL_SDK_DISABLED=true, though the endpoint names the collector', async () => {
    const tracing = start({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' })
    expect(tracing.tracer).toBeUndefined()
    await inSpan(undefined, 'kinference.request', {}, () => 1)
    await tracing.flush()
    expect(collector.requests()).toEqual([])
  })

  it('refuses a TLS file it cannot read, naming the variable', () => {
    let error: unknown
    try {
      start({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example',
        OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ca.pem',
      })
    } catch (thrown) {
      error = thrown
    }
    expect(KinfError.isInstance(error) && error.code).toBe('invalid_config')
    expect((error as Error).message).toMatch(/^OTEL_EXPORTER_OTLP_CERTIFICATE/)
  })
})

describe('the test collector', () => {
  it('reads OTLP/JSON, and answers a body it cannot read with 400', async () => {
    const post = (type: string, body: string) =>
      fetch(`${collector.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      })
    const json = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'json-svc' } }] },
          scopeSpans: [
            {
              scope: { name: 'hand-written' },
              spans: [
                {
                  traceId: '5B8EFFF798038103D269B633813FC60C',
                  spanId: 'EEE19B7EC3C1B174',
                  name: 'json span',
                  kind: 'SPAN_KIND_CLIENT',
                  startTimeUnixNano: '1544712660000000000',
                  endTimeUnixNano: '1544712661000000000',
                  attributes: [
                    { key: 'n', value: { intValue: '42' } },
                    { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }] } } },
                  ],
                  status: { code: 2, message: 'boom' },
                },
              ],
            },
          ],
        },
      ],
    }
    expect((await post('application/json', JSON.stringify(json))).status).toBe(200)
    expect((await post('application/json', '{"resourceSpans": 7}')).status).toBe(400)
    expect((await post('application/x-protobuf', 'not protobuf \u00ff\u00ff')).status).toBe(400)
    expect(collector.spans()).toEqual([
      {
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId: 'eee19b7ec3c1b174',
        parentSpanId: '',
        name: 'json span',
        kind: 3,
        attributes: { n: 42, tags: ['a'] },
        status: { code: 2, message: 'boom' },
        serviceName: 'json-svc',
        resourceAttributes: { 'service.name': 'json-svc' },
        scopeName: 'hand-written',
        scopeVersion: '',
        startNs: 1544712660000000000n,
        endNs: 1544712661000000000n,
      },
    ])
    expect(collector.refusals().map((refusal) => refusal.status)).toEqual([400, 400])
  })
})
