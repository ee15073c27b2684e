import { builtinConditions } from '../policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import { inferencePolicySpecSchema } from './inference-policy.ts'
import { InferencePolicy, type KindDefinition, kindDefinitions } from './resource.ts'

/**
 * The InferencePolicy kind (for the CRD generator and the validator) whose rules match on
 * the conditions of the registry. The built-in registry's is the one built when the
 * module loads, so validating with it builds no schema.
 */
export function inferencePolicyKind(conditions: ConditionRegistry): KindDefinition {
  const builtin = kindDefinitions.InferencePolicy
  if (conditions === builtinConditions) return builtin
  return {
    ...builtin,
    schema: InferencePolicy.extend({ spec: inferencePolicySpecSchema(conditions) }),
  }
}
