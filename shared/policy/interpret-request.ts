import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import type { PolicyRule } from '../crd/inference-policy.ts'
import { actionBackends } from '../crd/policy-action.ts'
import { KinfError } from '../errors/kinf-error.ts'
import { builtinConditions } from './conditions/builtin-conditions.ts'
import type { ConditionRegistry, ConditionResult } from './conditions/policy-condition.ts'
import { effectiveLabels } from './effective-labels.ts'
import { findTenant, modelAllowed } from './find-tenant.ts'
import { matchRequestConditions, statusPools } from './match-rule.ts'
import type { PolicyRequest } from './policy-decision.ts'
import { resolveBackend } from './resolve-backend.ts'

/**
 * A request as its tenant's rules read it before any pool status is known: the governing
 * policy, the labels rules see, each rule's request conditions for each model the request
 * may carry when it gets there, and the pools whose status may change the decision. Made
 * once per request (per prompt length: the scorer's exact count is a new request to the
 * rules), then carried: the edge and the scorer ask the pools it names, and decidePolicy
 * (evaluate-policy.ts) reads its results instead of testing the conditions again.
 */
export interface InterpretedRequest {
  snapshot: ConfigSnapshot
  request: PolicyRequest
  /** The rule conditions the policy's matches hold (shared/policy/conditions). */
  conditions: ConditionRegistry
  /** The tenant's policy; null when the snapshot does not know the tenant. */
  governing: ReturnType<typeof findTenant>
  /** Rules see these (effectiveLabels: every constrained label when a detector failed). */
  labels: ReadonlySet<string>
  /** The pools whose live status may change the decision, sorted; [] when none may. */
  pools: string[]
  /** The request conditions of the policy's rule `index`, met by the request under `model`. */
  requestConditions(index: number, model: string): ConditionResult
}

/**
 * Reads the request against its tenant's rules as evaluatePolicy walks them, except that a
 * rule with a status condition may or may not fire, so both paths are followed from it;
 * each pool such a condition reads, and each pool whose status the firing action reads
 * to order or admit, is one to ask.
 */
export function interpretRequest(
  snapshot: ConfigSnapshot,
  request: PolicyRequest,
  conditions: ConditionRegistry = builtinConditions,
): InterpretedRequest {
  const governing = findTenant(snapshot, request.tenant)
  const labels = governing ? effectiveLabels(governing.policy.spec, request) : new Set<string>()
  const rules = governing?.policy.spec.rules ?? []
  const tested = new Map<string, ConditionResult>()
  const requestConditions = (index: number, model: string): ConditionResult => {
    const key = `${index}\n${model}`
    const known = tested.get(key)
    if (known) return known
    const rule = rules[index]
    if (rule === undefined) throw new KinfError('internal', `the policy has no rule ${index}`)
    const subject = { tenant: request.tenant, model, promptTokens: request.promptTokens, labels }
    const result = matchRequestConditions(rule.match, subject, conditions)
    tested.set(key, result)
    return result
  }
  const interpreted = {
    snapshot,
    request,
    conditions,
    governing,
    labels,
    pools: [],
    requestConditions,
  }
  if (governing === null || !modelAllowed(governing.tenant, request.model)) return interpreted
  return { ...interpreted, pools: poolsOf(interpreted) }
}

function poolsOf(interpreted: InterpretedRequest): string[] {
  const { snapshot, request, governing } = interpreted
  if (governing === null) return []
  const { namespace } = governing.policy
  const pools = new Set<string>()
  // The models the request may carry at this point; several after a conditional rewrite.
  let models = new Set([request.model])
  for (const [index, rule] of governing.policy.spec.rules.entries()) {
    if (models.size === 0) break
    const next = new Set<string>()
    for (const model of models) {
      if (!interpreted.requestConditions(index, model).holds) {
        next.add(model)
        continue
      }
      const read = statusPools(rule.match, namespace, interpreted.conditions)
      for (const pool of read) pools.add(pool)
      if (read.length > 0) next.add(model)
      if (rule.action.rewriteModel) {
        next.add(rule.action.rewriteModel.model)
        continue
      }
      for (const name of statusDependentBackends(rule)) {
        const { pool } = resolveBackend(snapshot, namespace, name).target
        if (pool !== undefined) pools.add(pool)
      }
    }
    models = next
  }
  return [...pools].sort()
}

/**
 * Backends whose pool status the rule reads to order or admit; none for a fixed order. A
 * service level that acts on a miss reads every backend's (the best local prediction).
 */
function statusDependentBackends(rule: PolicyRule): readonly string[] {
  const { action, serviceLevel } = rule
  if (serviceLevel && serviceLevel.whenUnattainable !== 'Serve') return actionBackends(action)
  if (action.route) return action.route.backends.length > 1 ? action.route.backends : []
  if (action.burst) return action.burst.local
  if (action.preferCheaper) return action.preferCheaper.backends
  if (action.deferUntilIdle) return action.deferUntilIdle.backends
  return []
}
