import { z } from 'zod'
import { builtinConditions } from './policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from './policy/conditions/policy-condition.ts'
import type { StrategyRegistry } from './routing/strategies/define-strategy.ts'
import { builtinStrategies } from './routing/strategies/strategy-registry.ts'

/**
 * The plugins a process runs with: the routing strategies pools may name and the rule
 * conditions policies may use. A plain value, made once by an entry point (the edge's
 * EdgeRuntime, the scorer's startScorer) and passed down to whatever parses a snapshot,
 * reads a policy's rules or builds a pool's router; what is derived from it (schemas) is
 * built once there too.
 */
export interface Plugins {
  strategies: StrategyRegistry
  conditions: ConditionRegistry
}

/** What a build runs unless told otherwise: the registries' built-in lines. */
export const builtinPlugins: Plugins = {
  strategies: builtinStrategies,
  conditions: builtinConditions,
}

/** The `plugins` field of a service's options (config-store followers, publishers). */
export const PluginsOption = z
  .custom<Plugins>(
    (value) => typeof value === 'object' && value !== null && 'strategies' in value,
    'must be { strategies, conditions }',
  )
  .default(() => builtinPlugins)
  .describe('The strategies and conditions snapshots are read with (the built-in ones)')
