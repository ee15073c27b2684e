import {
  type Context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  TraceFlags,
  trace,
} from '@opentelemetry/api'

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): version 00's
 * `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. A later version's header is read
 * on its first four fields, as the recommendation asks; anything else is no parent.
 */
const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/** The parent a traceparent header names; null when absent, malformed or all zeros. */
export function parseTraceparent(
  traceparent: string | null | undefined,
  tracestate?: string | null,
): SpanContext | null {
  const match = traceparentPattern.exec(traceparent?.trim() ?? '')
  if (!match) return null
  const [, version, traceId, spanId, flags, rest] = match as unknown as string[]
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null
  const context: SpanContext = {
    traceId: traceId as string,
    spanId: spanId as string,
    traceFlags: Number.parseInt(flags as string, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  }
  if (!isSpanContextValid(context)) return null
  return tracestate ? { ...context, traceState: traceStateOf(tracestate) } : context
}

/** A span's traceparent header (version 00). */
export function formatTraceparent(context: SpanContext): string {
  const flags = (context.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0')
  return `00-${context.traceId}-${context.spanId}-${flags}`
}

/** The context a request's trace headers continue: the root context when they name none. */
export function contextOfHeaders(header: (name: string) => string | null | undefined): Context {
  const parent = parseTraceparent(header('traceparent'), header('tracestate'))
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT
}

/**
 * The trace headers an upstream gets so that its spans are children of `span`:
 * traceparent, and the tracestate the trace carried in.
 */
export function traceHeadersOf(span: Span): Record<string, string> {
  const context = span.spanContext()
  if (!isSpanContextValid(context)) return {}
  const state = context.traceState?.serialize()
  return {
    traceparent: formatTraceparent(context),
    ...(state ? { tracestate: state } : {}),
  }
}

/** tracestate carried as received: the edge neither reads nor adds members. */
function traceStateOf(header: string): SpanContext['traceState'] {
  const serialized = header.trim().slice(0, 512)
  const unchanged = {
    set: () => unchanged,
    unset: () => unchanged,
    get: () => undefined,
    serialize: () => serialized,
  }
  return unchanged
}
