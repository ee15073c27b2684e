import type { KvCacheSpecInfo } from './engine-kv-event.ts'
import type { SimHybridOptions } from './kv-events-options.ts'

/** One KV-cache group: its index (group_idx on the wire), spec and block size. */
export interface KvCacheGroup {
  readonly index: number
  readonly spec: KvCacheSpecInfo
  readonly blockSize: number
}

/**
 * The model's KV-cache groups. Hybrid models hash requests at the GCD of the groups' block
 * sizes and take a coarser group's block hash from the last fine hash inside it
 * (`resolve_kv_cache_block_sizes`, `BlockHashListWithBlockSize` in
 * `vllm/v1/core/kv_cache_utils.py`); a cache hit must be a multiple of every group's block
 * size, their LCM (`HybridKVCacheCoordinator.lcm_block_size`).
 */
export interface KvCacheLayout {
  readonly groups: readonly KvCacheGroup[]
  readonly hashBlockSize: number
  readonly hitAlignment: number
  /** Whether BlockStored/BlockRemoved carry the group and spec (always with several groups). */
  readonly announceGroups: boolean
}

export function kvCacheLayout(
  blockSize: number,
  hybrid: SimHybridOptions | null,
  groupFields: boolean,
): KvCacheLayout {
  if (hybrid === null) {
    const spec: KvCacheSpecInfo = { kind: 'full_attention', slidingWindow: null }
    return {
      groups: [{ index: 0, spec, blockSize }],
      hashBlockSize: blockSize,
      hitAlignment: blockSize,
      announceGroups: groupFields,
    }
  }
  const fullSize = hybrid.fullAttentionBlockSize ?? blockSize
  const windowSize = hybrid.slidingWindowBlockSize ?? blockSize
  const full: KvCacheSpecInfo = { kind: 'full_attention', slidingWindow: null }
  const window: KvCacheSpecInfo = { kind: 'sliding_window', slidingWindow: hybrid.slidingWindow }
  const windows = Array.from({ length: hybrid.slidingWindowGroups }, () => ({
    spec: window,
    blockSize: windowSize,
  }))
  const order = hybrid.slidingWindowFirst
    ? [...windows, { spec: full, blockSize: fullSize }]
    : [{ spec: full, blockSize: fullSize }, ...windows]
  return {
    groups: order.map((group, index) => ({ index, ...group })),
    hashBlockSize: gcd(fullSize, windowSize),
    hitAlignment: (fullSize / gcd(fullSize, windowSize)) * windowSize,
    announceGroups: true,
  }
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b)
}
