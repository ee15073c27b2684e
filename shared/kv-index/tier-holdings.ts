import { z } from 'zod'
import type { PodId } from './kv-index.ts'
import { wholeNumber } from './kv-index-limits.ts'

/**
 * vLLM's events for blocks held outside the GPU, as tier holdings take them: the KV
 * connectors' media ("CPU" and "STORAGE" of the OffloadingConnector, FS and OBJ in v0.26,
 * anything else a connector names). Only the engine hashes count: an offloaded block's
 * hash is the GPU block's (`vllm/distributed/kv_transfer/kv_connector/v1/offloading/
 * events.py`), and the placeholder events carry no tokens to key by.
 */
export type TierEvent =
  | { type: 'stored'; medium: string; engineHashes: readonly bigint[] }
  | { type: 'removed'; medium: string; engineHashes: readonly bigint[] }
  /** AllBlocksCleared: every tier of the pod. */
  | { type: 'cleared' }

/** Per medium, the distinct engine hashes a pod holds there. */
export type TierCounts = Record<string, number>

/**
 * Which engine hashes each pod holds in which non-GPU tier. Not GPU prefix-cache hits (a
 * block there must be loaded back first), so the KvIndex never counts them; routing may
 * weigh them later. One interface, two implementations passing the same conformance suite
 * (test/support/kv-index/tier-holdings-conformance.ts): in memory and in Redis (shared by
 * scorer replicas, like the Redis KvIndex).
 *
 * A hash stored n times in a tier is held until removed n times: the connector announces
 * a hash once per chunk that contains it and removes it as often (events.py, "consumers
 * are expected to deduplicate (reference-count)").
 */
export interface TierHoldings {
  /**
   * One batch of a pod's tier events, in order, all or nothing. With `seq`, a batch at or
   * below the last seq applied for the pod does nothing and answers duplicate (replicas
   * sharing the holdings each apply every pod's stream), as KvIndex.apply.
   */
  apply(pod: PodId, events: readonly TierEvent[], seq?: bigint): Promise<{ duplicate: boolean }>
  /** For each hash, whether the pod holds it in `medium`; aligned with `hashes`. */
  holds(pod: PodId, medium: string, hashes: readonly bigint[]): Promise<boolean[]>
  /** Per pod (aligned with `pods`), the hashes it holds per medium; media holding none are left out. */
  counts(pods: readonly PodId[]): Promise<TierCounts[]>
  /** Forgets the pod: every tier and its last seq (a restarted pod's stream starts at 0). */
  dropPod(pod: PodId): Promise<void>
  close(): Promise<void>
}

/**
 * The limits both implementations share, defaults included. Past maxHashesPerTier the
 * pod's tier is emptied (so many more than any cache holds means lost BlockRemoved events);
 * events of a medium beyond maxTiersPerPod are ignored.
 */
export const TierHoldingsLimits = z.strictObject({
  maxHashesPerTier: wholeNumber(1)
    .default(1_048_576)
    .describe('Engine hashes per pod and medium (a CPU tier of 100 GiB holds ~50,000 blocks)'),
  maxTiersPerPod: wholeNumber(1)
    .default(8)
    .describe('Media per pod; events of another medium are ignored'),
})
export type TierHoldingsLimits = z.infer<typeof TierHoldingsLimits>
