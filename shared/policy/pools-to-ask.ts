import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import type { RuleAction } from '../crd/policy-action.ts'
import { effectiveLabels } from './effective-labels.ts'
import { findTenant, modelAllowed } from './evaluate-policy.ts'
import { matchRequestConditions } from './match-rule.ts'
import type { PolicyRequest } from './policy-decision.ts'
import { policyPoolId, resolveBackend } from './resolve-backend.ts'

/**
 * The pools whose live status may change the decision for this request, sorted; [] when
 * the scorer need not be asked. Follows the rules as evaluatePolicy does, but a rule
 * with a pool condition may or may not fire, so both paths are followed from it.
 */
export function poolsToAsk(snapshot: ConfigSnapshot, request: PolicyRequest): string[] {
  const governing = findTenant(snapshot, request.tenant)
  if (governing === null || !modelAllowed(governing.tenant, request.model)) return []
  const { policy } = governing
  const labels = effectiveLabels(policy.spec, request)
  const pools = new Set<string>()
  // The models the request may carry at this point; several after a conditional rewrite.
  let models = new Set([request.model])
  for (const rule of policy.spec.rules) {
    if (models.size === 0) break
    const next = new Set<string>()
    for (const model of models) {
      const subject = { tenant: request.tenant, model, promptTokens: request.promptTokens, labels }
      if (!matchRequestConditions(rule.match, subject).holds) {
        next.add(model)
        continue
      }
      const conditional = rule.match.pool !== undefined
      if (rule.match.pool) pools.add(policyPoolId(policy.namespace, rule.match.pool.name))
      if (conditional) next.add(model)
      if (rule.action.rewriteModel) {
        next.add(rule.action.rewriteModel.model)
        continue
      }
      for (const name of statusDependentBackends(rule.action)) {
        const { pool } = resolveBackend(snapshot, policy.namespace, name).target
        if (pool !== undefined) pools.add(pool)
      }
    }
    models = next
  }
  return [...pools].sort()
}

/** Backends whose pool status the action reads to order or admit; none for a fixed order. */
function statusDependentBackends(action: RuleAction): readonly string[] {
  if (action.route) return action.route.backends.length > 1 ? action.route.backends : []
  if (action.burst) return action.burst.local
  if (action.preferCheaper) return action.preferCheaper.backends
  if (action.deferUntilIdle) return action.deferUntilIdle.backends
  return []
}
