import { decidePolicy } from '../../../shared/policy/evaluate-policy.ts'
import { interpretRequest } from '../../../shared/policy/interpret-request.ts'
import type { EdgeDeps } from '../edge-deps.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/**
 * decide's counterpart for POST /v1/embeddings: the tenant's policy on the request's facts
 * (model, labels, the estimate of the tokens embedded), decided here. The scorer is not
 * asked for its pools' status first, as it is for a completion whose rules read it: an
 * embedding is never burst, so the status could only choose among in-cluster pools, and
 * the scorer's own admission answers "saturated" for one that is full (the next in-cluster
 * attempt is then tried). A rule's pool-status condition therefore reads as unknown here.
 */
export function decideEmbedding(
  deps: Pick<EdgeDeps, 'plugins'>,
): EdgeStage<'snapshot' | 'embedding', 'outcome'> {
  return edgeStage(
    'decideEmbedding',
    { reads: ['snapshot', 'embedding'], sets: ['outcome'], span: 'policy' },
    async (c, next, trace) => {
      const request = c.get('embedding')
      const facts = {
        tenant: request.tenant,
        model: request.model,
        promptTokens: request.promptTokens,
        labels: request.labels,
        detectorFailed: request.detectorFailed,
      }
      const interpreted = interpretRequest(c.get('snapshot'), facts, deps.plugins?.conditions)
      const decision = decidePolicy(interpreted, () => undefined)
      trace?.span.setAttributes({
        'kinference.decision': decision.kind,
        ...(decision.policy ? { 'kinference.policy': decision.policy } : {}),
        ...(decision.rule ? { 'kinference.rule': decision.rule } : {}),
      })
      c.set('outcome', { kind: 'decided', decision, from: 0, notes: [], decider: 'edge' })
      await next()
    },
  )
}
