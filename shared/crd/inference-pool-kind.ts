import type { StrategyRegistry } from '../routing/strategies/define-strategy.ts'
import { builtinStrategies } from '../routing/strategies/strategy-registry.ts'
import { inferencePoolSpecSchema } from './inference-pool.ts'
import { InferencePool, type KindDefinition, kindDefinitions } from './resource.ts'

/**
 * The InferencePool kind (for the CRD generator and the validator) whose routing names a
 * strategy of the registry and takes its parameters. The built-in registry's is the one
 * built when the module loads, so validating with it builds no schema.
 */
export function inferencePoolKind(strategies: StrategyRegistry): KindDefinition {
  const builtin = kindDefinitions.InferencePool
  if (strategies === builtinStrategies) return builtin
  return { ...builtin, schema: InferencePool.extend({ spec: inferencePoolSpecSchema(strategies) }) }
}
