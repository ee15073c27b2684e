import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  type Attributes,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { type Log, type LogFields, logWith } from '../../../shared/logging/log.ts'
import { failSpan, scopeUnder, type TraceScope } from '../../../shared/tracing/in-span.ts'
import { stageAttribute, stageSpanName } from '../../../shared/tracing/stage-spans.ts'
import { contextOfHeaders } from '../../../shared/tracing/trace-context.ts'

/** The attribute every scorer span names its request with. */
export const requestIdAttribute = 'kinference.request_id'

/** What the access line says of a request besides its method, path and status. */
export interface AccessFacts {
  tenant: string
  model: string
  pool: string
  pod: string
  prompt_tokens: number
  cached_tokens: number | null
  completion_tokens: number
  /** From the request's arrival to its first streamed token. */
  ttft_ms: number
  /** Who answered: a pod, or the edge (a route call's decision handed back). */
  answered_by: 'pod' | 'edge'
}

/**
 * One request the scorer serves, from its arrival to the end of its answer: its route span
 * (the parent of its stages' spans), its log lines (each with its request id once known),
 * and its access line, written when the answer ends.
 */
export interface RequestTrail {
  /** Where the request's stage spans go (under its route span); undefined: tracing is off. */
  readonly scope: TraceScope | undefined
  /** The scorer's log, its lines about this request carrying its request_id. */
  readonly log: Log
  readonly requestId: string | null
  /** The request's id is known (read from the edge's signed claims, or made here). */
  identify(requestId: string): void
  /** What the access line and the route span say of the request, as it is learnt. */
  note(facts: Partial<AccessFacts>): void
  /** The request failed with what was thrown (the server answers it). */
  fail(error: unknown): void
  /**
   * The handler is done (its last attempt's outcome noted): the span ends and the access
   * line is written once the response has closed too.
   */
  done(): void
}

/**
 * The route span's attributes of the access facts. Its tokens are not the GenAI usage
 * attributes: those belong to the pod's span, and a backend summing them would count twice.
 */
const spanAttributeOf: Record<keyof AccessFacts, string> = {
  tenant: 'kinference.tenant',
  model: 'gen_ai.request.model',
  pool: 'kinference.pool',
  pod: 'kinference.pod',
  prompt_tokens: 'kinference.prompt_tokens',
  cached_tokens: 'kinference.cached_tokens',
  completion_tokens: 'kinference.completion_tokens',
  ttft_ms: 'kinference.ttft_ms',
  answered_by: 'kinference.answered_by',
}

/**
 * Opens a request's trail as it arrives: its SERVER span `kinference.route`, a child of the
 * span the incoming traceparent names (the edge's own), when `context.tracer` is set. The
 * span ends and the access line (info) is written once the response has closed and the
 * handler is done, with the status the client got, whoever answered (the handler, or the
 * server's error answer).
 */
export function openRequestTrail(
  context: {
    tracer?: Tracer | undefined
    log: Log
    requestIds?: WeakMap<ServerResponse, string> | undefined
  },
  req: IncomingMessage,
  res: ServerResponse,
  startedMs: number,
): RequestTrail {
  const method = req.method ?? 'POST'
  const path = (req.url ?? '/').split('?')[0] ?? '/'
  const { tracer } = context
  // Read only when traced: untraced requests do no work for spans.
  const parent = tracer ? contextOfHeaders((name) => headerOf(req, name)) : ROOT_CONTEXT
  const span = tracer?.startSpan(
    stageSpanName('route'),
    {
      kind: SpanKind.SERVER,
      attributes: { [stageAttribute]: 'route', 'http.request.method': method, 'url.path': path },
    },
    parent,
  )
  const facts: Partial<AccessFacts> = {}
  let requestId: string | null = null
  let log = context.log
  let failed = false
  // The response closes as its last byte goes out, before the handler has the outcome.
  let pending = 2
  const settle = () => {
    if (--pending > 0) return
    const status = res.statusCode
    span?.setAttribute('http.response.status_code', status)
    if (span && status >= 500 && !failed) span.setStatus({ code: SpanStatusCode.ERROR })
    span?.end()
    const duration = performance.now() - startedMs
    const traceId = span?.spanContext().traceId
    log('request', { ...accessLine(method, path, res, facts, duration), trace_id: traceId })
  }
  res.once('close', settle)
  return {
    scope: tracer && span ? scopeUnder({ tracer, parent }, span) : undefined,
    get log() {
      return log
    },
    get requestId() {
      return requestId
    },
    identify(id) {
      requestId = id
      context.requestIds?.set(res, id)
      log = logWith(context.log, { request_id: id })
      span?.setAttribute(requestIdAttribute, id)
    },
    note(more) {
      Object.assign(facts, more)
      span?.setAttributes(attributesOf(more))
    },
    fail(error) {
      if (!span) return
      // A client's mistake (4xx) is the request's answer, not a failure of the scorer.
      if (KinfError.isInstance(error) && error.status < 500) {
        span.setAttribute('error.type', error.code)
        return
      }
      failed = true
      failSpan(span, error)
    },
    done: settle,
  }
}

function accessLine(
  method: string,
  path: string,
  res: ServerResponse,
  facts: Partial<AccessFacts>,
  durationMs: number,
): LogFields {
  return {
    level: 'info',
    // The edge's access lines have the same shape (workers/app/log-edge-access.ts).
    kind: 'access',
    method,
    path,
    status: res.statusCode,
    ...facts,
    ...(facts.ttft_ms === undefined ? {} : { ttft_ms: Math.round(facts.ttft_ms) }),
    duration_ms: Math.round(durationMs),
    // False when the answer was cut (the client left) before its end.
    complete: res.writableFinished,
  }
}

function attributesOf(facts: Partial<AccessFacts>): Attributes {
  const attributes: Attributes = {}
  for (const [name, value] of Object.entries(facts)) {
    if (value !== undefined && value !== null)
      attributes[spanAttributeOf[name as keyof AccessFacts]] = value
  }
  return attributes
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}
