import { builtinConditions } from './conditions/builtin-conditions.ts'
import type {
  ConditionRegistry,
  ConditionResult,
  MatchSubject,
  PolicyCondition,
} from './conditions/policy-condition.ts'
import type { PoolStatus } from './policy-decision.ts'

/** A parsed rule match seen field by field; the registry says what each field is. */
export type ConditionValues = Readonly<Record<string, unknown>>

/**
 * The conditions that depend on the request only (tenants, models, prompt length,
 * labels), so interpretRequest can test them before any pool status is known.
 */
export function matchRequestConditions(
  match: ConditionValues,
  subject: MatchSubject,
  conditions: ConditionRegistry = builtinConditions,
): ConditionResult {
  const why: string[] = []
  for (const [condition, value] of present(match, conditions)) {
    if (condition.reads !== 'request') continue
    const result = condition.match(value, subject)
    if (!result.holds) return result
    why.push(...result.why)
  }
  return { holds: true, why }
}

/** Every given condition of the rule, request conditions first, then live pool status. */
export function matchRule(
  match: ConditionValues,
  namespace: string,
  subject: MatchSubject,
  poolStatus: (poolId: string) => PoolStatus | undefined,
  conditions: ConditionRegistry = builtinConditions,
): ConditionResult {
  const request = matchRequestConditions(match, subject, conditions)
  return matchStatusConditions(request, match, namespace, poolStatus, conditions)
}

/**
 * The rule's conditions on live pool status, once its request conditions came to `request`
 * (shared/policy/interpret-request.ts tests those once per request): `request` when they
 * did not hold.
 */
export function matchStatusConditions(
  request: ConditionResult,
  match: ConditionValues,
  namespace: string,
  poolStatus: (poolId: string) => PoolStatus | undefined,
  conditions: ConditionRegistry = builtinConditions,
): ConditionResult {
  if (!request.holds) return request
  const why = [...request.why]
  for (const [condition, value] of present(match, conditions)) {
    if (condition.reads !== 'poolStatus') continue
    const result = condition.match(value, { namespace, poolStatus })
    if (!result.holds) return result
    why.push(...result.why)
  }
  return { holds: true, why }
}

/**
 * The pools whose live status the rule's conditions read, so the scorer is asked for
 * them first; [] when the rule's firing depends on the request alone.
 */
export function statusPools(
  match: ConditionValues,
  namespace: string,
  conditions: ConditionRegistry = builtinConditions,
): string[] {
  return present(match, conditions).flatMap(([condition, value]) =>
    condition.reads === 'poolStatus' ? condition.pools(value, namespace) : [],
  )
}

/** The registry's conditions the rule gives, in registry order, with their values. */
function present(
  match: ConditionValues,
  conditions: ConditionRegistry,
): [PolicyCondition, unknown][] {
  return conditions.flatMap((condition) => {
    const value = match[condition.key]
    return value === undefined ? [] : [[condition, value] as [PolicyCondition, unknown]]
  })
}
