import type { Span } from '@opentelemetry/api'
import type { Next } from 'hono'
import { failSpan, scopeUnder, type TraceScope } from '../../../shared/tracing/in-span.ts'
import { type Stage, stageAttribute, stageSpanName } from '../../../shared/tracing/stage-spans.ts'

/** A traced request: its server span, and the scope its stages' spans start in. */
export interface RequestTrace {
  span: Span
  scope: TraceScope
}

/** A stage's own span, when tracing is on: what its upstream calls are children of. */
export interface StageTrace {
  span: Span
  scope: TraceScope
}

/**
 * Runs a stage in its span. The span measures the stage's own work: it ends when the stage
 * hands on to the next one (what follows is theirs), or when it answers or fails, a
 * failure marking it an error. Untraced requests just run.
 */
export async function stageSpan<T>(
  request: RequestTrace | undefined,
  stage: Stage,
  run: (trace: StageTrace | undefined, handOn: (next: Next) => Promise<void>) => Promise<T>,
): Promise<T> {
  if (!request) return run(undefined, (next) => next())
  const { tracer } = request.scope
  const span = tracer.startSpan(
    stageSpanName(stage),
    { attributes: { [stageAttribute]: stage } },
    request.scope.parent,
  )
  let open = true
  const end = () => {
    if (open) span.end()
    open = false
  }
  const trace = { span, scope: scopeUnder(request.scope, span) }
  try {
    return await run(trace, (next) => {
      end()
      return next()
    })
  } catch (error) {
    if (open) failSpan(span, error)
    throw error
  } finally {
    end()
  }
}
