import { validRequestId } from '../../../shared/openai/request-id.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'
import { withHeaders } from './with-headers.ts'

/**
 * Before every route: every answer carries x-request-id, errors and unknown paths included.
 * A route that tags its requests (tag-request.ts) sets it; otherwise the client's, when a
 * sane one (shared/openai/request-id.ts), else a new id, so that a client can always quote
 * one (docs/edge-keys-and-errors.md §1.6).
 */
export function answerRequestId(newRequestId: () => string): EdgeStage<never, never> {
  return edgeStage('answerRequestId', {}, async (c, next) => {
    await next()
    if (c.res.headers.has('x-request-id')) return
    withHeaders(c, {
      'x-request-id': validRequestId(c.req.header('x-request-id')) ?? newRequestId(),
    })
  })
}
