import type { Span } from '@opentelemetry/api'
import { traceHeadersOf } from './trace-context.ts'

/**
 * The headers an upstream call carries: `headers` with the trace context replaced by
 * `span`'s, so the upstream's spans (the scorer's, vLLM's) are its children. Without a span
 * (tracing off) the client's trace context passes on unchanged.
 */
export function tracedHeaders(
  headers: Record<string, string>,
  span: Span | undefined,
): Record<string, string> {
  if (!span) return headers
  const { traceparent: _, tracestate: __, ...rest } = headers
  return { ...rest, ...traceHeadersOf(span) }
}
