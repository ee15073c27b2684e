import type { RuleMatchOf } from '../../crd/policy-match.ts'
import { labelsCondition } from './labels.ts'
import { modelsCondition } from './models.ts'
import type { ConditionRegistry } from './policy-condition.ts'
import { poolCondition } from './pool.ts'
import { promptTokensCondition } from './prompt-tokens.ts'
import { tenantsCondition } from './tenants.ts'

/**
 * The conditions of an InferencePolicy rule's match, one line each, in the order they are
 * tested (request conditions before status conditions) and appear in the CRD. Whatever
 * builds the policy schema, matches rules or validates them takes a registry like this
 * one; a new condition is one file beside these and one line here.
 */
export const builtinConditions = [
  tenantsCondition,
  modelsCondition,
  promptTokensCondition,
  labelsCondition,
  poolCondition,
] as const satisfies ConditionRegistry

/** A parsed rule `match` under the built-in conditions. */
export type RuleMatch = RuleMatchOf<typeof builtinConditions>
