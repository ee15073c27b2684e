import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import type { TierLookup } from '../../../shared/kv-index/tier-lookup.ts'
import type { StrategyRegistry } from '../../../shared/routing/strategies/define-strategy.ts'
import type { PodFeeds } from '../../kv-feeds/pod-feeds.ts'
import type { ScorerMetrics } from '../metrics/scorer-metrics.ts'
import type { TokenizationGuardOptions } from '../serving/tokenization-options.ts'
import type { TokenizerCache } from '../serving/tokenizer-cache.ts'
import type { StatePool } from '../state/scorer-state.ts'
import { PoolRuntime } from './pool-runtime.ts'

/**
 * What runtimes of new pools share: the index, the pods' feeds, the tokenizers, the
 * counters, and the strategies their specs name one of (the scorer's plugins).
 */
export interface PoolRuntimeShared {
  index: KvIndex
  /** The pods' CPU tiers as routers look them up (absent: GPU hits only). */
  tiers?: TierLookup
  feeds: PodFeeds
  metrics: ScorerMetrics
  tokenizers: TokenizerCache
  guard: TokenizationGuardOptions
  strategies: StrategyRegistry
}

/** How the scorer's reconciler makes a runtime for a pool of a new config. */
export function poolRuntimeFactory(
  { index, tiers, feeds, metrics, tokenizers, guard, strategies }: PoolRuntimeShared,
  log: (message: string) => void,
): (pool: StatePool) => PoolRuntime {
  return (pool) =>
    new PoolRuntime({
      id: pool.id,
      name: pool.name,
      namespace: pool.namespace,
      spec: pool.spec,
      strategies,
      index,
      ...(tiers && { tiers }),
      feeds,
      tokenizers,
      guard,
      onError: log,
      random: Math.random,
      onHoldEnd: (heldMs, outcome) =>
        metrics.holdSeconds.labels({ pool: pool.name, outcome }).observe(heldMs / 1000),
      counters: metrics,
    })
}
