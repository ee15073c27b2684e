import type { EdgeClaims } from '../shared/auth/edge-signature.ts'
import type { ConfigSnapshot } from '../shared/config/config-snapshot.ts'
import { evaluatePolicy } from '../shared/policy/evaluate-policy.ts'
import type { PolicyDecision, PolicyRequest, PoolStatus } from '../shared/policy/policy-decision.ts'
import { poolsToAsk } from '../shared/policy/pools-to-ask.ts'
import type { EdgeDeps } from './edge-deps.ts'
import type { EdgeRequest } from './read-edge-request.ts'

export interface EdgeDecision {
  decision: PolicyDecision
  /** false when the scorer was asked and could not answer. */
  scorerReachable: boolean
  policyRequest: PolicyRequest
}

/** Between two looks at a busy pool for deferred work. */
const deferPollMs = 500

/**
 * Asks the scorer about the pools the decision may depend on (only those), replaces the
 * estimated prompt length with the scorer's exact count, and evaluates the policy. Deferred
 * work waits, looking again, up to the rule's maxWaitMs.
 */
export async function decideRequest(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  claims: EdgeClaims,
): Promise<EdgeDecision> {
  const policyRequest: PolicyRequest = {
    tenant: request.tenant,
    model: request.model,
    promptTokens: request.promptTokens,
    labels: request.labels,
    detectorFailed: request.detectorFailed,
  }
  const started = deps.nowMs()
  for (;;) {
    const asked = await askScorer(deps, snapshot, request, policyRequest, claims)
    const decision = evaluatePolicy(snapshot, {
      request: policyRequest,
      poolStatus: (pool) => asked.statuses.get(pool),
    })
    if (decision.kind !== 'defer')
      return { decision, scorerReachable: asked.reachable, policyRequest }
    const waited = deps.nowMs() - started
    if (waited >= decision.maxWaitMs)
      return { decision, scorerReachable: asked.reachable, policyRequest }
    await deps.sleep(Math.min(deferPollMs, decision.maxWaitMs - waited))
  }
}

async function askScorer(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  policyRequest: PolicyRequest,
  claims: EdgeClaims,
): Promise<{ statuses: Map<string, PoolStatus>; reachable: boolean }> {
  const statuses = new Map<string, PoolStatus>()
  const pools = poolsToAsk(snapshot, policyRequest)
  if (pools.length === 0) return { statuses, reachable: true }
  const targets = pools.flatMap((id) => {
    const pool = snapshot.pools[id]
    if (!pool) return []
    const served = pool.spec.models.find((m) => m.name === request.model) ?? pool.spec.models[0]
    return served ? [{ id, pool: pool.name, model: served.name }] : []
  })
  if (targets.length === 0) return { statuses, reachable: true }
  try {
    const answer = await deps.scorer.estimate(
      {
        kind: request.kind,
        bodyText: request.text,
        targets: targets.map(({ pool, model }) => ({ pool, model })),
      },
      claims,
    )
    const exact: number[] = []
    answer.results.forEach((result, i) => {
      const target = targets[i]
      if (!target || result.estimate === null) return
      statuses.set(target.id, result.estimate)
      exact.push(result.estimate.promptTokens)
    })
    // The scorer tokenized with the pools' own tokenizers: better than the edge's estimate.
    if (exact.length > 0) policyRequest.promptTokens = Math.max(...exact)
    return { statuses, reachable: true }
  } catch (error) {
    deps.metrics.inc('scorer_unreachable')
    deps.log(`scorer estimate failed: ${(error as Error).message}`)
    return { statuses, reachable: false }
  }
}
