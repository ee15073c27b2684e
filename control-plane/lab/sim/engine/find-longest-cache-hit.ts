import { nullBlock } from './block-pool.ts'
import type { KvCacheSpecKind } from './engine-kv-event.ts'

/** The cached block of block index `index` in each group of one attention type, or undefined. */
export type BlockLookup = (index: number) => readonly number[] | undefined

/** KV-cache groups of identical spec: vLLM looks them up together. */
export interface AttentionType {
  kind: KvCacheSpecKind
  blockSize: number
  slidingWindow: number | null
  /** Group indexes, in order. */
  groups: readonly number[]
  lookup: BlockLookup
}

/**
 * `FullAttentionManager.find_longest_cache_hit` (`vllm/v1/core/single_type_kv_cache_manager.py`):
 * blocks from the start while every group holds one, at most floor(maxLength/blockSize),
 * then trimmed to a multiple of `alignment` tokens.
 */
export function fullAttentionHit(type: AttentionType, maxLength: number, alignment: number) {
  const hits: number[][] = type.groups.map(() => [])
  const maxBlocks = Math.floor(maxLength / type.blockSize)
  for (let index = 0; index < maxBlocks; index++) {
    const found = type.lookup(index)
    if (!found) break
    hits.forEach((blocks, g) => {
      blocks.push(found[g] as number)
    })
  }
  trimToAlignment(hits, type.blockSize, alignment)
  return hits
}

/**
 * `SlidingWindowManager.find_longest_cache_hit`: scanning from the right, the first run of
 * cached blocks long enough to fill the window (ceil((window−1)/blockSize) blocks) ending
 * on an aligned boundary fixes the hit; the blocks before the run are null placeholders.
 * Without such a run, only a run that starts at block 0 counts.
 */
export function slidingWindowHit(type: AttentionType, maxLength: number, alignment: number) {
  const { blockSize } = type
  const needed = Math.ceil(((type.slidingWindow ?? 1) - 1) / blockSize)
  const maxBlocks = Math.floor(maxLength / blockSize)
  const hits = type.groups.map(() => new Array<number>(maxBlocks).fill(nullBlock))
  let contiguous = 0
  for (let index = maxBlocks - 1; index >= 0; index--) {
    const found = type.lookup(index)
    if (!found) {
      contiguous = 0
      continue
    }
    if (contiguous === 0 && blockSize !== alignment && ((index + 1) * blockSize) % alignment !== 0)
      continue
    hits.forEach((blocks, g) => {
      blocks[index] = found[g] as number
    })
    contiguous++
    if (contiguous >= needed) {
      for (const blocks of hits) blocks.length = index + contiguous
      return hits
    }
  }
  for (const blocks of hits) blocks.length = contiguous
  trimToAlignment(hits, blockSize, alignment)
  return hits
}

/**
 * `HybridKVCacheCoordinator.find_longest_cache_hit` (`vllm/v1/core/kv_cache_coordinator.py`):
 * full attention first, then each other type within the length found so far, until no
 * type shortens it (one pass for one full-attention type and one other); the hit must
 * suit every group. Returns each group's hit blocks and the hit length in tokens.
 */
export function longestCacheHit(
  types: readonly AttentionType[],
  numGroups: number,
  maxLength: number,
  alignment: number,
): { blocks: number[][]; tokens: number } {
  const ordered = [...types].sort(
    (a, b) => Number(a.kind !== 'full_attention') - Number(b.kind !== 'full_attention'),
  )
  const blocks: (number[] | null)[] = new Array(numGroups).fill(null)
  const simple = ordered.length === 2 && ordered[0]?.kind === 'full_attention'
  let length = maxLength
  for (;;) {
    let current = length
    for (const type of ordered) {
      const previous = blocks[type.groups[0] as number]
      if (type.kind === 'full_attention' && previous) {
        current = Math.floor(current / type.blockSize) * type.blockSize
        continue
      }
      const hit =
        type.kind === 'full_attention'
          ? fullAttentionHit(type, current, alignment)
          : slidingWindowHit(type, current, alignment)
      current = (hit[0]?.length ?? 0) * type.blockSize
      type.groups.forEach((group, g) => {
        blocks[group] = hit[g] as number[]
      })
    }
    const shortened = current < length
    length = Math.min(length, current)
    if (!shortened || simple) break
  }
  for (const type of ordered) {
    if (type.kind !== 'full_attention') continue
    for (const group of type.groups) blocks[group]?.splice(Math.floor(length / type.blockSize))
  }
  return { blocks: blocks.map((hit) => hit ?? []), tokens: length }
}

function trimToAlignment(hits: number[][], blockSize: number, alignment: number): void {
  if (blockSize === alignment) return
  while (((hits[0]?.length ?? 0) * blockSize) % alignment !== 0) for (const h of hits) h.pop()
}
