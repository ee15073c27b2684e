import { describe, expect, it } from 'vitest'
import { nullBlock } from '../../../../../control-plane/lab/sim/engine/block-pool.ts'
import {
  type AttentionType,
  fullAttentionHit,
  longestCacheHit,
  slidingWindowHit,
} from '../../../../../control-plane/lab/sim/engine/find-longest-cache-hit.ts'

/** One attention type whose group `g` holds block `100·(g+1) + index` for the indexes given. */
function type(
  kind: AttentionType['kind'],
  blockSize: number,
  cached: readonly number[],
  options: { groups?: number[]; slidingWindow?: number; missingIn?: number } = {},
): AttentionType {
  const groups = options.groups ?? [0]
  return {
    kind,
    blockSize,
    slidingWindow: options.slidingWindow ?? null,
    groups,
    lookup: (index) => {
      if (!cached.includes(index)) return undefined
      if (options.missingIn === index) return undefined
      return groups.map((g) => 100 * (g + 1) + index)
    },
  }
}

describe('fullAttentionHit', () => {
  it('takes blocks from the start up to the first miss, at most floor(maxLength / blockSize)', () => {
    expect(fullAttentionHit(type('full_attention', 16, [0, 1, 2, 4]), 1000, 16)).toEqual([
      [100, 101, 102],
    ])
    expect(fullAttentionHit(type('full_attention', 16, [0, 1, 2, 3]), 47, 16)).toEqual([[100, 101]])
  })

  it('trims the hit to a multiple of the alignment (the LCM of the groups’ block sizes)', () => {
    expect(fullAttentionHit(type('full_attention', 16, [0, 1, 2]), 1000, 32)).toEqual([[100, 101]])
  })
})

describe('slidingWindowHit', () => {
  it('needs only the blocks the window of the next token covers, nulls before them', () => {
    // Window 33: ceil(32/16) = 2 contiguous blocks; blocks 0-1 were freed long ago.
    const swa = type('sliding_window', 16, [2, 3, 4, 5], { slidingWindow: 33 })
    expect(slidingWindowHit(swa, 96, 16)).toEqual([
      [nullBlock, nullBlock, nullBlock, nullBlock, 104, 105],
    ])
  })

  it('searches from the right and stops at the first run long enough', () => {
    const swa = type('sliding_window', 16, [0, 1, 3, 4, 6], { slidingWindow: 33 })
    // Block 6 alone is too short a run; 3-4 is the last one that fills the window.
    expect(slidingWindowHit(swa, 112, 16)).toEqual([[nullBlock, nullBlock, nullBlock, 103, 104]])
  })

  it('without such a run, only the run starting at block 0 counts', () => {
    const swa = type('sliding_window', 16, [0, 2, 3], { slidingWindow: 100 })
    expect(slidingWindowHit(swa, 64, 16)).toEqual([[100]])
  })

  it('ends a run only on an aligned boundary', () => {
    const swa = type('sliding_window', 16, [0, 1, 2, 3, 4], { slidingWindow: 17 })
    // Alignment 32: the hit cannot end after block 4 (80 tokens), so it ends after block 3.
    expect(slidingWindowHit(swa, 80, 32)).toEqual([[nullBlock, nullBlock, nullBlock, 103]])
  })
})

describe('longestCacheHit (HybridKVCacheCoordinator)', () => {
  it('is the longest length every group can serve, full attention truncated to it', () => {
    const full = type('full_attention', 16, [0, 1, 2, 3, 4, 5], { groups: [0] })
    // The window group lost its last block: the hit ends where its window is still whole.
    const swa = type('sliding_window', 16, [0, 1, 2, 3, 4], { groups: [1], slidingWindow: 33 })
    const hit = longestCacheHit([swa, full], 2, 1000, 16)
    expect(hit.tokens).toBe(80)
    expect(hit.blocks[0]).toEqual([100, 101, 102, 103, 104])
    expect(hit.blocks[1]).toEqual([nullBlock, nullBlock, nullBlock, 203, 204])
  })

  it('equals the full-attention hit when the windows are cached', () => {
    const full = type('full_attention', 16, [0, 1, 2, 3], { groups: [0] })
    const swa = type('sliding_window', 16, [0, 1, 2, 3, 4, 5], { groups: [1], slidingWindow: 33 })
    expect(longestCacheHit([full, swa], 2, 1000, 16).tokens).toBe(64)
  })

  it('needs the block in every group of a type', () => {
    const full = type('full_attention', 16, [0, 1, 2, 3], { groups: [0] })
    const swa = type('sliding_window', 16, [0, 1, 2, 3], {
      groups: [1, 2],
      slidingWindow: 17,
      missingIn: 3,
    })
    const hit = longestCacheHit([full, swa], 3, 1000, 16)
    expect(hit.tokens).toBe(48)
    expect(hit.blocks[2]).toEqual([nullBlock, nullBlock, 302])
  })

  it('is a single group’s own hit without a hybrid', () => {
    const hit = longestCacheHit([type('full_attention', 16, [0, 1, 2])], 1, 40, 16)
    expect(hit).toEqual({ blocks: [[100, 101]], tokens: 32 })
  })
})
