import type { EdgeClaims } from '../../shared/auth/edge-signature.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { decidePolicy } from '../../shared/policy/evaluate-policy.ts'
import { interpretRequest } from '../../shared/policy/interpret-request.ts'
import type { PolicyDecision, PolicyRequest } from '../../shared/policy/policy-decision.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { policyBundleJson } from './policy-bundles.ts'
import type { EdgeRequest } from './read-edge-request.ts'
import type { RouteAnswer } from './scorer-client.ts'
import { scorerBody } from './upstream-body.ts'

/** What deciding a request came to: served already (by the scorer), or a decision to carry out. */
export type EdgeOutcome =
  | { kind: 'served'; response: Response }
  | {
      kind: 'decided'
      decision: PolicyDecision
      /** The first attempt to make (the scorer tried the ones before). */
      from: number
      /** Why earlier attempts were passed over. */
      notes: string[]
      /**
       * Who decided: the scorer (which logged the external attempt it handed over, at
       * `from`), or the edge alone (no pool to ask, or the scorer unreachable).
       */
      decider: 'edge' | 'scorer'
    }

export interface DecideContext {
  claims: EdgeClaims
  /** Headers for the scorer (request id, trace context). */
  passHeaders: Record<string, string>
  signal?: AbortSignal
}

/** Between two looks at a busy pool for deferred work. */
const deferPollMs = 500

/**
 * Decides a request. When the policy does not depend on any pool's status, here and at
 * once. When it does, in one call to the scorer carrying the tenant's policy: the scorer
 * tokenizes and looks the prompt up once per pool, decides on the live statuses and the
 * exact prompt length, and serves the request itself when the first attempt is local.
 * Deferred work waits, asking again, up to the rule's maxWaitMs. An unreachable scorer
 * leaves the statuses unknown: the policy then decides without them.
 */
export async function decideRequest(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  context: DecideContext,
): Promise<EdgeOutcome> {
  const facts: PolicyRequest = {
    tenant: request.tenant,
    model: request.model,
    promptTokens: request.promptTokens,
    labels: request.labels,
    detectorFailed: request.detectorFailed,
    ...(request.sloTtftMs === undefined ? {} : { sloTtftMs: request.sloTtftMs }),
  }
  // The plugins' conditions read the rules (the built-in ones when the deps name none).
  const conditions = deps.plugins?.conditions
  const bundle = policyBundleJson(snapshot, request.tenant, conditions)
  // Read once: the pools to ask, and the decision here when the scorer is not asked.
  const interpreted = interpretRequest(snapshot, facts, conditions)
  const decidedHere = (notes: string[]): EdgeOutcome => ({
    kind: 'decided',
    decision: decidePolicy(interpreted, () => undefined),
    from: 0,
    notes,
    decider: 'edge',
  })
  if (bundle === null || interpreted.pools.length === 0) return decidedHere([])
  const started = deps.nowMs()
  const body = await scorerBody(deps, snapshot, request)
  for (;;) {
    let answer: RouteAnswer
    try {
      answer = await deps.scorer.route(
        request.kind,
        bundle,
        body,
        context.claims,
        context.passHeaders,
        context.signal,
      )
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error
      deps.metrics.inc('scorer_unreachable')
      deps.log(`scorer route failed: ${(error as Error).message}`, {
        level: 'warn',
        request_id: context.claims.requestId,
      })
      return decidedHere(['scorer unreachable: pool status unknown'])
    }
    if (answer.kind === 'served') return answer
    const { decision, from, notes } = answer.decided
    const decided: EdgeOutcome = { kind: 'decided', decision, from, notes, decider: 'scorer' }
    if (decision.kind !== 'defer') return decided
    const waited = deps.nowMs() - started
    if (waited >= decision.maxWaitMs) return decided
    await deps.sleep(Math.min(deferPollMs, decision.maxWaitMs - waited))
  }
}
