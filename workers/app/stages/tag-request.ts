import { passThroughHeaders } from '../../../shared/attempts/pass-through-headers.ts'
import { validRequestId } from '../../../shared/openai/request-id.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/**
 * Stage 1: the request's ids. The edge's own id keys the scorer's log and state; a
 * client's x-request-id is passed on and echoed only when it is a sane one
 * (shared/openai/request-id.ts). Set first, so that every error answer carries it.
 */
export function tagRequest(
  newRequestId: () => string,
): EdgeStage<never, 'requestId' | 'edgeId' | 'passHeaders'> {
  return edgeStage(
    'tagRequest',
    { sets: ['requestId', 'edgeId', 'passHeaders'] },
    async (c, next) => {
      const headers = c.req.raw.headers
      const edgeId = newRequestId()
      const requestId = validRequestId(headers.get('x-request-id')) ?? edgeId
      const passHeaders = passThroughHeaders((name) => headers.get(name), requestId)
      c.set('requestId', requestId)
      c.set('edgeId', edgeId)
      c.set('passHeaders', passHeaders)
      await next()
    },
  )
}
