import { builtinConditions, type RuleMatch } from '../policy/conditions/builtin-conditions.ts'
import { labelsRequireAny } from '../policy/conditions/labels.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import type { ConditionValues } from '../policy/match-rule.ts'

/**
 * True when every request matching `later` also matches `earlier`, so a terminal
 * `earlier` rule makes `later` unreachable: each condition `earlier` gives covers the
 * same condition of `later` (an omitted one admits everything). Sound but not complete,
 * as each condition's own coverage is.
 */
export function ruleCovers(
  earlier: ConditionValues,
  later: ConditionValues,
  conditions: ConditionRegistry = builtinConditions,
): boolean {
  const known = new Set(conditions.map((condition) => condition.key))
  // A condition the registry does not know (a match parsed with another registry) is doubt.
  if (Object.keys(earlier).some((key) => !known.has(key) && earlier[key] !== undefined))
    return false
  return conditions.every((condition) => {
    const value = earlier[condition.key]
    return value === undefined || condition.covers(value, later[condition.key])
  })
}

/** True when every request the match admits carries at least one of `labels`. */
export function matchRequiresAnyLabel(match: RuleMatch, labels: readonly string[]): boolean {
  return labelsRequireAny(match.labels, labels)
}
