import { checkHeaderBytes } from '../request-limits.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/** Before every route: request headers past maxHeaderBytes get a 431. */
export function limitHeaders(maxHeaderBytes: number): EdgeStage<never, never> {
  return edgeStage('limitHeaders', {}, async (c, next) => {
    checkHeaderBytes(c.req.raw.headers, maxHeaderBytes)
    await next()
  })
}
