import type { Tracer } from '@opentelemetry/api'
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import { expect } from 'vitest'
import { ScorerConfig } from '../../control-plane/scorer/scorer-config.ts'
import { startScorer } from '../../control-plane/scorer/start-scorer.ts'
import type { LogFields } from '../../shared/logging/log.ts'
import { type RecordingVllmPod, startRecordingVllmPod } from './recording-vllm-pod.ts'
import { model, poolSpec, type Stack, secret, until } from './scorer-stack.ts'
import type { ScorerStacks } from './use-scorer-stacks.ts'

// A scorer started by hand over stand-in vLLM pods, with a tracer whose spans stay in
// memory and a log that keeps its lines: what the scorer's tracing and logging tests read.

export const edgeTraceId = '0af7651916cd43dd8448eb211c80319c'
export const edgeSpanId = 'b7ad6b7169203331'
export const edgeTraceparent = `00-${edgeTraceId}-${edgeSpanId}-01`

export interface TracedScorer {
  stack: Stack
  pods: RecordingVllmPod[]
  spans: () => ReadableSpan[]
  lines: { message: string; fields: LogFields }[]
}

/** A scorer over stand-in pods, its spans kept in memory (none when `traced` is false). */
export async function tracedScorer(
  stacks: ScorerStacks,
  options: {
    pods?: number
    traced?: boolean
    failure?: (n: number) => number | null
    spec?: ReturnType<typeof poolSpec>
    gate?: Promise<void>
  } = {},
): Promise<TracedScorer> {
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const tracer: Tracer | undefined =
    options.traced === false ? undefined : provider.getTracer('test')
  let served = 0
  const failure = options.failure ?? (() => null)
  const pods: RecordingVllmPod[] = []
  for (let i = 0; i < (options.pods ?? 1); i++)
    pods.push(stacks.closing(await startRecordingVllmPod(() => failure(served++), options.gate)))
  const lines: { message: string; fields: LogFields }[] = []
  const scorer = stacks.closing(
    await startScorer(
      ScorerConfig.parse({
        port: 0,
        metricsPort: null,
        signingSecrets: [secret],
        pools: [{ name: 'default', spec: options.spec ?? poolSpec() }],
        pods: pods.map((pod, i) => ({
          name: `pod-${i}`,
          pool: 'default',
          http: pod.url,
          events: null,
          replay: null,
        })),
      }),
      (message, fields = {}) => lines.push({ message, fields }),
      undefined,
      { tracer },
    ),
  )
  stacks.defer(() => provider.shutdown())
  const stack = { scorer, pods: [], close: async () => {} } as unknown as Stack
  return { stack, pods, spans: () => exporter.getFinishedSpans(), lines }
}

export const chat = (stream: boolean) => ({
  model,
  stream,
  max_tokens: 2,
  messages: [{ role: 'user', content: `a traced question, streamed ${stream}` }],
})

export const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name)
export const one = (spans: ReadableSpan[], name: string) => {
  const found = byName(spans, name)
  expect(found, name).toHaveLength(1)
  return found[0] as ReadableSpan
}
export const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
export const traceparentOf = (pod: RecordingVllmPod, n = 0) => {
  const header = pod.received[n]?.headers.traceparent
  const [, traceId, parentId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(header)) ?? []
  return { header, traceId, parentId }
}

/** The spans of one request once its route span ended (after its answer was sent). */
export async function requestSpans(traced: TracedScorer): Promise<ReadableSpan[]> {
  await until(() => byName(traced.spans(), 'kinference.route').length > 0)
  return traced.spans()
}
