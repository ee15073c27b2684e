import type { PodCandidate } from '../routing-strategy.ts'

/**
 * GIE's default `lruCapacityPerServer`: blocks remembered per pod when its capacity is unknown
 * or `autoTune` is off (approximateprefix/types.go).
 */
export const APPROXIMATE_LRU_CAPACITY_PER_SERVER = 31_250

/** GIE's default `maxPrefixBlocksToMatch` (approximateprefix/types.go). */
export const APPROXIMATE_MAX_PREFIX_BLOCKS_TO_MATCH = 256

/**
 * `autoTune` (on by default): a pod's LRU holds as many entries as the pod has KV blocks
 * (vllm:cache_config_info num_gpu_blocks); null when the pod's capacity is unknown.
 */
export function autoTunedCapacity(pod: PodCandidate, blockSize: number): number | null {
  return pod.memory === null ? null : Math.floor(pod.memory.capacityTokens / blockSize)
}

/**
 * GIE's approximate prefix index (GIE `P/requestcontrol/dataproducer/approximateprefix/
 * indexer.go`): one LRU of block hashes per pod, learnt only from the router's own decisions,
 * plus a reverse map hash → pods for lookups. Nothing tells it what a pod actually evicted.
 */
export interface ApproximatePrefixIndex {
  /**
   * GIE's `matchLongestPrefix`: walk the blocks in order, stop at the first block no pod
   * holds, and count for every pod the blocks it holds up to there.
   */
  match(hashes: readonly number[]): Map<string, number>
  /**
   * The request with these blocks was sent to `pod`: they become its most recent entries. A
   * pod's LRU is sized when its first entries arrive, with `capacity` if given (GIE sizes it
   * from the pod's num_gpu_blocks then, and never resizes it).
   */
  add(pod: string, hashes: readonly number[], capacity?: number): void
  removePod(pod: string): void
  /** Block hashes remembered for `pod`. */
  size(pod: string): number
}

export function createApproximatePrefixIndex(
  defaultCapacityPerPod: number,
): ApproximatePrefixIndex {
  // A Map iterates in insertion order: re-inserting a key makes it the most recent.
  const lruByPod = new Map<string, Map<number, true>>()
  const capacityByPod = new Map<string, number>()
  const podsByHash = new Map<number, Set<string>>()

  function forget(hash: number, pod: string): void {
    const pods = podsByHash.get(hash)
    if (pods === undefined) return
    pods.delete(pod)
    if (pods.size === 0) podsByHash.delete(hash)
  }

  return {
    match(hashes) {
      const matched = new Map<string, number>()
      for (const hash of hashes) {
        const pods = podsByHash.get(hash)
        if (pods === undefined) break
        for (const pod of pods) matched.set(pod, (matched.get(pod) ?? 0) + 1)
      }
      return matched
    },
    add(pod, hashes, capacity) {
      let lru = lruByPod.get(pod)
      if (lru === undefined) {
        lru = new Map()
        lruByPod.set(pod, lru)
        capacityByPod.set(
          pod,
          capacity !== undefined && capacity > 0 ? capacity : defaultCapacityPerPod,
        )
      }
      const capacityPerPod = capacityByPod.get(pod) as number
      for (const hash of hashes) {
        if (lru.delete(hash)) {
          lru.set(hash, true)
          continue
        }
        lru.set(hash, true)
        let pods = podsByHash.get(hash)
        if (pods === undefined) {
          pods = new Set()
          podsByHash.set(hash, pods)
        }
        pods.add(pod)
        if (lru.size > capacityPerPod) {
          const oldest = lru.keys().next().value as number
          lru.delete(oldest)
          forget(oldest, pod)
        }
      }
    },
    removePod(pod) {
      const lru = lruByPod.get(pod)
      if (lru === undefined) return
      for (const hash of lru.keys()) forget(hash, pod)
      lruByPod.delete(pod)
      capacityByPod.delete(pod)
    },
    size(pod) {
      return lruByPod.get(pod)?.size ?? 0
    },
  }
}
