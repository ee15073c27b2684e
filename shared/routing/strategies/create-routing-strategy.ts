import { z } from 'zod'
import { SchedulerLimits } from '../../crd/inference-pool.ts'
import type { RoutingBlocks } from '../../crd/routing-spec.ts'
import { KinfError } from '../../errors/kinf-error.ts'
import type { RoutingStrategy } from '../routing-strategy.ts'
import { SHIPPED_PEAK_PREFILL_TOKENS_PER_SECOND } from './create-llmd-sticky-strategy.ts'
import type { StrategyPool, StrategyRegistry } from './define-strategy.ts'
import { type BuiltinStrategy, builtinStrategies } from './strategy-registry.ts'

/**
 * The strategies' parameter blocks, named as in a pool's `routing` spec, so a parsed
 * `RoutingSpec` can be passed as it is. Blocks may be partial: defaults come from the
 * strategies' schemas. The built-ins' blocks are typed; a registered strategy's are not.
 */
export type StrategyParameterBlocks = RoutingBlocks<BuiltinStrategy, 'input'> & {
  readonly [block: string]: unknown
}

const noParameters = z.object({})

const defaultPool: StrategyPool = {
  stepBudget: SchedulerLimits.parse({}).maxNumBatchedTokens,
  peakPrefillTokensPerSecond: SHIPPED_PEAK_PREFILL_TOKENS_PER_SECOND,
}

/**
 * A routing strategy of the registry by name, with its published defaults unless the blocks
 * override them; the block of another strategy is a mistake. Every call returns a new
 * instance with its own state (turn, prefix indexes, trees).
 */
export function createRoutingStrategy(
  name: string,
  parameters: StrategyParameterBlocks = {},
  pool: StrategyPool = defaultPool,
  strategies: StrategyRegistry = builtinStrategies,
): RoutingStrategy {
  const definition = strategies.find((strategy) => strategy.name === name)
  if (definition === undefined) {
    const known = strategies.map((strategy) => strategy.name).join(', ')
    throw new KinfError('invalid_config', `unknown routing strategy "${name}" (known: ${known})`)
  }
  for (const other of strategies) {
    const block = other.parameters?.block
    if (other !== definition && block !== undefined && parameters[block] !== undefined) {
      throw new KinfError('invalid_config', `parameters "${block}" given for strategy "${name}"`)
    }
  }
  const own = definition.parameters
  const parsed = (own?.schema ?? noParameters).safeParse((own && parameters[own.block]) ?? {})
  if (!parsed.success) {
    throw new KinfError(
      'invalid_config',
      `parameters of strategy "${name}": ${z.prettifyError(parsed.error)}`,
    )
  }
  return definition.create(parsed.data, pool)
}
