import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import { tracedHeaders } from '../../../shared/tracing/traced-headers.ts'
import { decideRequest, type EdgeOutcome } from '../decide-request.ts'
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
    { reads: ['snapshot', 'request', 'edgeId', 'passHeaders'], sets: ['outcome'], span: 'policy' },
    async (c, next, trace) => {
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
        // The scorer's spans, when it is asked, are children of this stage's.
        passHeaders: tracedHeaders(c.get('passHeaders'), trace?.span),
        signal: c.req.raw.signal,
      })
      trace?.span.setAttributes(outcomeAttributes(outcome))
      c.set('outcome', outcome)
      await next()
    },
  )
}

/** What the policy decided, on its span: served by the scorer, or the decision's kind. */
function outcomeAttributes(outcome: EdgeOutcome): Record<string, string> {
  if (outcome.kind === 'served') return { 'kinference.decision': 'served_by_scorer' }
  const { decision } = outcome
  return {
    'kinference.decision': decision.kind,
    ...('policy' in decision && decision.policy ? { 'kinference.policy': decision.policy } : {}),
    ...('rule' in decision && decision.rule ? { 'kinference.rule': decision.rule } : {}),
  }
}
