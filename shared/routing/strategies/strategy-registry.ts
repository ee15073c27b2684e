import { dynamoStrategy } from './create-dynamo-strategy.ts'
import { gieDefaultStrategy } from './create-gie-default-strategy.ts'
import { kinferenceStrategy } from './create-kinference-strategy.ts'
import { leastRequestStrategy } from './create-least-request-strategy.ts'
import { llmdStickyStrategy } from './create-llmd-sticky-strategy.ts'
import { roundRobinStrategy } from './create-round-robin-strategy.ts'
import { sglangCacheAwareStrategy } from './create-sglang-cache-aware-strategy.ts'

/**
 * The strategies this build runs, one line each. Their order is the CRD enum's, the docs'
 * and the benchmarks' (kinference, the default, first; the benchmarks list it last). A
 * registry is a plain value: pass `[...builtinStrategies, yours]` where a registry is taken
 * (pool schemas, validation, CRDs, pool routers, the DES bench).
 */
export const builtinStrategies = [
  kinferenceStrategy,
  roundRobinStrategy,
  leastRequestStrategy,
  gieDefaultStrategy,
  llmdStickyStrategy,
  dynamoStrategy,
  sglangCacheAwareStrategy,
] as const

export type BuiltinStrategy = (typeof builtinStrategies)[number]
export type BuiltinStrategyName = BuiltinStrategy['name']
