import {
  type Attributes,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api'
import type { Log, LogFields } from '../../../shared/logging/log.ts'
import { failSpan, scopeUnder, type TraceScope } from '../../../shared/tracing/in-span.ts'
import { stageAttribute, stageSpanName } from '../../../shared/tracing/stage-spans.ts'
import { contextOfHeaders, traceHeadersOf } from '../../../shared/tracing/trace-context.ts'
import { requestIdAttribute } from '../serving/request-trail.ts'
import type { Pick } from './endpoint-picker.ts'

/** What the pick span and the access line say of a request, as the pick learns it. */
export interface PickFacts {
  tenant: string
  model: string
  pool: string
  /** The chosen pod (the primary endpoint's). */
  pod: string
  prompt_tokens: number
  /** The prompt tokens the index says the chosen pod holds: a prediction, not vLLM's usage. */
  matched_tokens: number
  predicted_ttft_ms: number
}

/**
 * How a pick ended: endpoints answered; refused 503 (no pod ready, none in the subset, the
 * pool saturated), 429 (an objective its best pod misses, or held past its hold), another
 * status (a bad request); or no answer: the gateway left, or the pick failed.
 */
export type PickOutcome = 'picked' | 'no_endpoint' | 'shed' | 'refused' | 'gone' | 'failed'

const spanAttributeOf: Record<keyof PickFacts, string> = {
  tenant: 'kinference.tenant',
  model: 'gen_ai.request.model',
  pool: 'kinference.pool',
  pod: 'kinference.pod',
  prompt_tokens: 'kinference.prompt_tokens',
  matched_tokens: 'kinference.cache.matched_tokens',
  predicted_ttft_ms: 'kinference.predicted_ttft_ms',
}

/** The longest path an access line carries, as the edge's. */
const maxLoggedPath = 256

/**
 * One pick of the Endpoint Picker, from the request's headers to its answer: its span (the
 * parent of its stages' spans, and of vLLM's through the traceparent the answer sets) and
 * its access line. The EPP's part ends with its answer: the gateway carries the rest.
 */
export interface PickTrail {
  /** Where the pick's stage spans go (under its span); undefined: tracing is off. */
  readonly scope: TraceScope | undefined
  identify(requestId: string): void
  note(facts: Partial<PickFacts>): void
  /**
   * The pick is answered: the span ends and the access line is written. Endpoints are
   * returned with the span's traceparent (and the trace's tracestate) among the headers the
   * pod gets, when tracing is on; unchanged when off (the client's own pass through).
   */
  answered(pick: Pick): Pick
  /** The pick threw: no answer (`gone`: the gateway left first). */
  failed(error: unknown, gone: boolean): void
}

/**
 * Opens a pick's trail as the request's headers arrive over ext_proc: with `context.tracer`,
 * a SERVER span `kinference.route` marked `kinference.endpoint_picker`, a child of the span
 * the headers' traceparent names (the gateway's, or its client's).
 */
export function openPickTrail(
  context: { tracer?: Tracer | undefined; log: Log },
  headers: Readonly<Record<string, string>>,
  startedMs: number,
): PickTrail {
  const method = headers[':method'] ?? 'POST'
  const path = ((headers[':path'] ?? '/').split('?')[0] ?? '/').slice(0, maxLoggedPath)
  const { tracer } = context
  // Read only when traced: untraced requests do no work for spans.
  const parent = tracer ? contextOfHeaders((name) => headers[name]) : ROOT_CONTEXT
  const span = tracer?.startSpan(
    stageSpanName('route'),
    {
      kind: SpanKind.SERVER,
      attributes: {
        [stageAttribute]: 'route',
        'kinference.endpoint_picker': true,
        'http.request.method': method,
        'url.path': path,
      },
    },
    parent,
  )
  const facts: Partial<PickFacts> = {}
  let requestId: string | undefined
  let ended = false
  const end = (outcome: PickOutcome, status: number | undefined, attributes: Attributes) => {
    if (ended) return
    ended = true
    span?.setAttributes({ ...attributes, 'kinference.outcome': outcome })
    if (status !== undefined) span?.setAttribute('http.response.status_code', status)
    if (span && status !== undefined && status >= 500)
      span.setStatus({ code: SpanStatusCode.ERROR, message: `answered ${status}` })
    span?.end()
    context.log('request', {
      ...accessLine(method, path, status, facts, performance.now() - startedMs),
      request_id: requestId,
      outcome,
      trace_id: span?.spanContext().traceId,
    })
  }
  return {
    scope: tracer && span ? scopeUnder({ tracer, parent }, span) : undefined,
    identify(id) {
      requestId = id
      span?.setAttribute(requestIdAttribute, id)
    },
    note(more) {
      Object.assign(facts, more)
      span?.setAttributes(attributesOf(more))
    },
    answered(pick) {
      if (pick.kind === 'refused') {
        end(refusedOutcome(pick.status), pick.status, {})
        return pick
      }
      end('picked', 200, { 'kinference.endpoints': [...pick.endpoints] })
      if (!span) return pick
      return { ...pick, headers: { ...pick.headers, ...traceHeadersOf(span) } }
    },
    failed(error, gone) {
      if (span && !gone) failSpan(span, error)
      end(gone ? 'gone' : 'failed', undefined, {})
    },
  }
}

function refusedOutcome(status: number): PickOutcome {
  if (status === 503) return 'no_endpoint'
  return status === 429 ? 'shed' : 'refused'
}

function accessLine(
  method: string,
  path: string,
  status: number | undefined,
  facts: Partial<PickFacts>,
  durationMs: number,
): LogFields {
  return {
    level: 'info',
    // The scorer's own access lines have the same shape (serving/request-trail.ts).
    kind: 'access',
    method,
    path,
    status,
    ...facts,
    ...(facts.predicted_ttft_ms === undefined
      ? {}
      : { predicted_ttft_ms: Math.round(facts.predicted_ttft_ms) }),
    duration_ms: Math.round(durationMs),
    endpoint_picker: true,
  }
}

function attributesOf(facts: Partial<PickFacts>): Attributes {
  const attributes: Attributes = {}
  for (const [name, value] of Object.entries(facts)) {
    if (value === undefined) continue
    const rounded = name === 'predicted_ttft_ms' ? Math.round(value as number) : value
    attributes[spanAttributeOf[name as keyof PickFacts]] = rounded
  }
  return attributes
}
