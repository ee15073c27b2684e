import { z } from 'zod'
import { SchedulerLimits } from '../../crd/inference-pool.ts'
import {
  DynamoParameters,
  GieDefaultParameters,
  KinferenceParameters,
  LlmdStickyParameters,
  type RoutingStrategyName,
  SglangCacheAwareParameters,
} from '../../crd/routing-strategy.ts'
import { KinfError } from '../../errors/kinf-error.ts'
import type { RoutingStrategy } from '../routing-strategy.ts'
import { createDynamoStrategy } from './create-dynamo-strategy.ts'
import { createGieDefaultStrategy } from './create-gie-default-strategy.ts'
import { createKinferenceStrategy } from './create-kinference-strategy.ts'
import { createLeastRequestStrategy } from './create-least-request-strategy.ts'
import {
  createLlmdStickyStrategy,
  SHIPPED_PEAK_PREFILL_TOKENS_PER_SECOND,
} from './create-llmd-sticky-strategy.ts'
import { createRoundRobinStrategy } from './create-round-robin-strategy.ts'
import { createSglangCacheAwareStrategy } from './create-sglang-cache-aware-strategy.ts'

/**
 * The peers' parameter blocks, named as in a pool's `routing` spec, so a parsed `RoutingSpec`
 * can be passed as it is. Blocks may be partial: defaults come from the CRD schemas.
 */
export interface StrategyParameterBlocks {
  kinference?: z.input<typeof KinferenceParameters> | undefined
  gieDefault?: z.input<typeof GieDefaultParameters> | undefined
  llmdSticky?: z.input<typeof LlmdStickyParameters> | undefined
  dynamo?: z.input<typeof DynamoParameters> | undefined
  sglangCacheAware?: z.input<typeof SglangCacheAwareParameters> | undefined
}

const blockOf = {
  kinference: 'kinference',
  'gie-default': 'gieDefault',
  'llmd-sticky': 'llmdSticky',
  dynamo: 'dynamo',
  'sglang-cache-aware': 'sglangCacheAware',
} as const satisfies Partial<Record<RoutingStrategyName, keyof StrategyParameterBlocks>>

/** The strategy's own block, validated with defaults applied; any other block is a mistake. */
function parametersOf<S extends z.ZodType>(
  name: RoutingStrategyName,
  blocks: StrategyParameterBlocks,
  schema: S,
): z.output<S> {
  for (const [strategy, block] of Object.entries(blockOf)) {
    if (strategy !== name && blocks[block] !== undefined) {
      throw new KinfError('invalid_config', `parameters "${block}" given for strategy "${name}"`)
    }
  }
  const own = (blockOf as Partial<Record<RoutingStrategyName, keyof StrategyParameterBlocks>>)[name]
  const parsed = schema.safeParse((own && blocks[own]) ?? {})
  if (!parsed.success) {
    throw new KinfError(
      'invalid_config',
      `parameters of strategy "${name}": ${z.prettifyError(parsed.error)}`,
    )
  }
  return parsed.data
}

/** What a strategy may need of the pool's pods beyond its own parameters. */
export interface StrategyPool {
  /** Per-step token budget (vLLM max_num_batched_tokens). */
  stepBudget: number
  /**
   * One full step of prefill over its duration, tokens/s: the pods' peak prefill throughput
   * from their GPU profile, what llm-d's calibrate.sh measures on a pod.
   */
  peakPrefillTokensPerSecond: number
}

const defaultPool: StrategyPool = {
  stepBudget: SchedulerLimits.parse({}).maxNumBatchedTokens,
  peakPrefillTokensPerSecond: SHIPPED_PEAK_PREFILL_TOKENS_PER_SECOND,
}

/**
 * A routing strategy by name, with its published defaults unless the blocks override them.
 * Every call returns a new instance with its own state (turn, prefix indexes, trees).
 */
export function createRoutingStrategy(
  name: RoutingStrategyName,
  parameters: StrategyParameterBlocks = {},
  pool: StrategyPool = defaultPool,
): RoutingStrategy {
  switch (name) {
    case 'round-robin':
      parametersOf(name, parameters, z.object({}))
      return createRoundRobinStrategy()
    case 'least-request':
      parametersOf(name, parameters, z.object({}))
      return createLeastRequestStrategy()
    case 'gie-default':
      return createGieDefaultStrategy(parametersOf(name, parameters, GieDefaultParameters))
    case 'llmd-sticky': {
      const own = parametersOf(name, parameters, LlmdStickyParameters)
      return createLlmdStickyStrategy(own, {
        peakPrefillTokensPerSecond:
          own.peakPrefillTokensPerSecond ?? pool.peakPrefillTokensPerSecond,
      })
    }
    case 'dynamo':
      return createDynamoStrategy(parametersOf(name, parameters, DynamoParameters))
    case 'sglang-cache-aware':
      return createSglangCacheAwareStrategy(
        parametersOf(name, parameters, SglangCacheAwareParameters),
      )
    case 'kinference': {
      const { copyHeadroom } = parametersOf(name, parameters, KinferenceParameters)
      return createKinferenceStrategy({ stepBudget: pool.stepBudget, copyHeadroom })
    }
  }
}
