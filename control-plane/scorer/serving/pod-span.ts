import { type Attributes, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api'
import {
  type GenAiOperation,
  genAi,
  genAiProviders,
  genAiRequestAttributes,
  genAiUsageAttributes,
} from '../../../shared/tracing/gen-ai-attributes.ts'
import type { TraceScope } from '../../../shared/tracing/in-span.ts'
import { stageAttribute, stageSpanName } from '../../../shared/tracing/stage-spans.ts'
import { traceHeadersOf } from '../../../shared/tracing/trace-context.ts'
import type { ProxyOutcome } from './proxy-to-pod.ts'
import { requestIdAttribute } from './request-trail.ts'

/** What one attempt on a pod is: the request as the pod gets it, and where it goes. */
export interface PodCallFacts {
  operation: GenAiOperation
  /** The model the pod is asked for. */
  model: string
  maxTokens: number | null
  stream: boolean
  podUrl: string
  pod: string
  pool: string
  requestId: string
  /** The scorer's count of the prompt, until the pod's usage says its own. */
  promptTokens: number
  /** The tokens of the prompt the index says the pod holds, and its predicted TTFT. */
  matchedTokens: number
  predictedTtftMs: number
  /** 1 for the first attempt, 2 for the retry on another pod. */
  attempt: number
}

/** An attempt on a pod as its span sees it; every call is a no-op when tracing is off. */
export interface PodCall {
  /**
   * The headers the pod gets: `base` with this span as traceparent (the pod's own spans
   * its children) when tracing is on; `base` as it is (the client's trace context) when off.
   */
  headers(base: Record<string, string>): Record<string, string>
  /** The first chunk of a streamed answer arrived. */
  firstChunk(): void
  /** The attempt ended: the answer's usage, or how it failed; the span ends. */
  ended(outcome: ProxyOutcome): void
}

const untraced: PodCall = { headers: (base) => base, firstChunk: () => {}, ended: () => {} }

/**
 * Opens an attempt's GenAI CLIENT span (`${operation} ${model}`, stage `pod`), a child of
 * the request's route span, ended when the answer (a stream) ends. Each attempt has its own.
 */
export function openPodSpan(scope: TraceScope | undefined, facts: PodCallFacts): PodCall {
  if (!scope) return untraced
  const startedMs = performance.now()
  const span = scope.tracer.startSpan(
    `${facts.operation} ${facts.model}`,
    { kind: SpanKind.CLIENT, attributes: podAttributes(facts), startTime: startedMs },
    scope.parent,
  )
  let firstChunkSeen = false
  return {
    headers(base) {
      const { traceparent: _parent, tracestate: _state, ...rest } = base
      return { ...rest, ...traceHeadersOf(span) }
    },
    firstChunk() {
      if (firstChunkSeen) return
      firstChunkSeen = true
      span.setAttribute(genAi.timeToFirstChunk, (performance.now() - startedMs) / 1000)
    },
    ended(outcome) {
      endPodSpan(span, facts, outcome)
    },
  }
}

function podAttributes(facts: PodCallFacts): Attributes {
  const url = new URL(facts.podUrl)
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
  return {
    [stageAttribute]: 'pod',
    [genAi.providerName]: genAiProviders.vllm,
    ...genAiRequestAttributes({
      operation: facts.operation,
      model: facts.model,
      maxTokens: facts.maxTokens,
      stream: facts.stream,
    }),
    'server.address': url.hostname,
    'server.port': port,
    [requestIdAttribute]: facts.requestId,
    'kinference.pool': facts.pool,
    'kinference.pod': facts.pod,
    'kinference.attempt': facts.attempt,
    'kinference.cache.matched_tokens': facts.matchedTokens,
    'kinference.predicted_ttft_ms': Math.round(facts.predictedTtftMs),
  }
}

/** The outcome on the span: usage when the answer came, an error status when it failed. */
function endPodSpan(span: Span, facts: PodCallFacts, outcome: ProxyOutcome): void {
  span.setAttribute('kinference.outcome', outcome.kind)
  switch (outcome.kind) {
    case 'completed':
      span.setAttribute('http.response.status_code', outcome.status)
      span.setAttributes(
        genAiUsageAttributes({
          inputTokens: outcome.promptTokens ?? facts.promptTokens,
          outputTokens: outcome.generatedTokens,
          cachedInputTokens: outcome.cachedTokens,
        }),
      )
      if (outcome.status >= 400)
        failed(span, String(outcome.status), `the pod answered ${outcome.status}`)
      break
    case 'failed-before-bytes':
      failed(span, outcome.cause, outcome.reason)
      break
    case 'failed-after-bytes':
      span.setAttribute(genAi.outputTokens, outcome.generatedTokens)
      failed(span, 'stream_broken', outcome.reason)
      break
    case 'client-gone':
      // The client's leaving is no failure of the pod: the span says so, unmarked.
      break
  }
  span.end()
}

function failed(span: Span, type: string, message: string): void {
  span.setAttribute('error.type', type)
  span.setStatus({ code: SpanStatusCode.ERROR, message })
}

/** How a hold ended: dispatched to a pod, or answered otherwise. */
export type HoldEnd = 'dispatched' | 'client-gone' | 'expired' | 'saturated' | 'failed'

/**
 * The `kinference.hold` span of a request that waited for room in its pool: recorded once
 * the wait is over (only a request that waited has one), from its start `heldMs` ago.
 */
export function recordHold(
  scope: TraceScope | undefined,
  facts: { pool: string; requestId: string },
  heldMs: number,
  end: HoldEnd,
): void {
  if (!scope) return
  const nowMs = performance.now()
  const span = scope.tracer.startSpan(
    stageSpanName('hold'),
    {
      kind: SpanKind.INTERNAL,
      startTime: nowMs - heldMs,
      attributes: {
        [stageAttribute]: 'hold',
        [requestIdAttribute]: facts.requestId,
        'kinference.pool': facts.pool,
        'kinference.hold.held_ms': Math.round(heldMs),
        'kinference.hold.outcome': end,
      },
    },
    scope.parent,
  )
  if (end === 'expired' || end === 'failed')
    span.setStatus({ code: SpanStatusCode.ERROR, message: `the hold ended: ${end}` })
  span.end(nowMs)
}
