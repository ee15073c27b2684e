import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../shared/kv-index/memory-kv-index.ts'
import { createMemoryTierHoldings } from '../../shared/kv-index/memory-tier-holdings.ts'
import type { TierHoldings } from '../../shared/kv-index/tier-holdings.ts'
import type { PodFeeds } from '../kv-feeds/pod-feeds.ts'
import type { StateMetrics } from '../scorer/metrics/state-metrics.ts'
import type { LivePools } from '../scorer/pools/live-pools.ts'
import type { ScorerConfig } from '../scorer/scorer-config.ts'
import { createGuardedKvIndex, type GuardedKvIndex } from './guarded-kv-index.ts'
import { createRedisKvIndex } from './redis-kv-index.ts'
import { createRedisTierHoldings } from './redis-tier-holdings.ts'

/**
 * The index: in memory, or in Redis behind a guard that routes cache-cold while Redis
 * fails (guarded-kv-index.ts), counted on /metrics; the pods' tier holdings beside it.
 */
export async function openScorerIndex(
  config: ScorerConfig,
  stateMetrics: StateMetrics,
  log: (message: string) => void,
): Promise<{ index: KvIndex; guard: GuardedKvIndex | null; tiers: TierHoldings }> {
  if (!config.redisUrl) {
    return { index: createMemoryKvIndex(), guard: null, tiers: createMemoryTierHoldings() }
  }
  const redis = await createRedisKvIndex({ redis: config.redisUrl, prefix: config.redisPrefix })
  const tiers = await createRedisTierHoldings({
    redis: config.redisUrl,
    prefix: config.redisPrefix,
  }).catch(async (error: unknown) => {
    await redis.close()
    throw error
  })
  const guard = createGuardedKvIndex({
    index: redis,
    probe: () => redis.ping(),
    onColdLookup: (reason) => stateMetrics.coldLookups(reason).inc(),
    log,
  })
  return { index: guard, guard, tiers }
}

/**
 * The index missed every batch since Redis failed: each pod's feed drops the pod and
 * replays its history from the pod's replay socket, as for a restarted pod. Pods no
 * runtime finds healthy are left alone: one that stopped answering is replayed when it
 * comes back (a restart), and asking it now would only wait for its timeout.
 */
export async function resyncFeeds(live: LivePools, feeds: PodFeeds): Promise<void> {
  const nowMs = performance.now()
  const pods = new Set(
    live
      .all()
      .flatMap((pool) => pool.router.podReports(nowMs))
      .filter((report) => report.healthy)
      .map((report) => report.name),
  )
  await Promise.all([...pods].map((pod) => feeds.get(pod)?.restart()))
}

/**
 * The block size a pod's full-attention events carry (docs/vllm-wire.md §1.8), told to
 * every pool routing to the pod: its router keys requests with it, since the pool's
 * `blockSize` is only what it assumes until the events say otherwise. Without `pod`, every
 * pool learns from its pods' feeds (a new runtime after a config change).
 */
export function learnBlockSizes(live: LivePools, feeds: PodFeeds, pod?: string): void {
  for (const pool of live.all()) {
    const pods = pool.router.podNames()
    for (const name of pod === undefined ? pods : pods.filter((name) => name === pod)) {
      const size = feeds.get(name)?.blockSize
      if (size !== null && size !== undefined) pool.router.learnBlockSize(size)
    }
  }
}
