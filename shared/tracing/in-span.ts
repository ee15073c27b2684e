import {
  type Attributes,
  type Context,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'

/** Where a piece of work's span goes: the tracer, and the span it is a child of. */
export interface TraceScope {
  tracer: Tracer
  parent: Context
}

/** A scope whose spans are children of `span`. */
export function scopeUnder(scope: TraceScope, span: Span): TraceScope {
  return { tracer: scope.tracer, parent: trace.setSpan(scope.parent, span) }
}

/**
 * Runs `work` inside a span named `name`, ended when the work settles; a failure marks the
 * span an error and is thrown on. Without a scope (tracing off) the work just runs.
 */
export async function inSpan<T>(
  scope: TraceScope | undefined,
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes },
  work: (span: Span | undefined) => Promise<T> | T,
): Promise<T> {
  if (!scope) return work(undefined)
  const span = scope.tracer.startSpan(name, options, scope.parent)
  try {
    return await work(span)
  } catch (error) {
    failSpan(span, error)
    throw error
  } finally {
    span.end()
  }
}

/** Marks a span failed with what was thrown (before it ends). */
export function failSpan(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof Error) span.recordException(error)
  span.setStatus({ code: SpanStatusCode.ERROR, message })
}
