import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import { decideRequest } from '../decide-request.ts'
import type { EdgeDeps } from '../edge-deps.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/**
 * Stage 6: the policy's decision, made here when it does not depend on any pool's status,
 * else by the scorer in one call that also serves the request when its first attempt is
 * local (decide-request.ts).
 */
export function decide(
  deps: EdgeDeps,
): EdgeStage<'snapshot' | 'request' | 'edgeId' | 'passHeaders', 'outcome'> {
  return edgeStage(
    'decide',
    { reads: ['snapshot', 'request', 'edgeId', 'passHeaders'], sets: ['outcome'] },
    async (c, next) => {
      const request = c.get('request')
      const claims: EdgeClaims = {
        tenant: request.tenant,
        labels: request.labels,
        backends: [],
        allowBurst: false,
        detectorFailed: request.detectorFailed,
        promptTokens: request.promptTokens,
        requestId: c.get('edgeId'),
        ...(request.sloTtftMs === undefined ? {} : { sloTtftMs: request.sloTtftMs }),
      }
      const outcome = await decideRequest(deps, c.get('snapshot'), request, {
        claims,
        passHeaders: c.get('passHeaders'),
        signal: c.req.raw.signal,
      })
      c.set('outcome', outcome)
      await next()
    },
  )
}
