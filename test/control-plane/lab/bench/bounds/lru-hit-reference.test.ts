import { describe, expect, it } from 'vitest'
import { capacityHitCeiling } from '../../../../../control-plane/lab/bench/bounds/capacity-hit-ceiling.ts'
import { infiniteHitCeiling } from '../../../../../control-plane/lab/bench/bounds/hit-ceiling.ts'
import { lruHitReference } from '../../../../../control-plane/lab/bench/bounds/lru-hit-reference.ts'
import type { RequestStream } from '../../../../../control-plane/lab/bench/bounds/request-stream.ts'

/** Requests of four 16-token blocks, each chain its own keys (`chain` × 10 + block). */
function streamOf(chains: readonly number[]): RequestStream {
  return {
    blockSize: 16,
    requests: chains.map((chain, i) => ({
      conversation: i,
      turn: 0,
      promptTokens: 65,
      outputTokens: 1,
      promptBlocks: [0, 1, 2, 3].map((b) => chain * 10 + b),
      answerBlocks: [],
    })),
  }
}

describe('lruHitReference', () => {
  it('equals the infinite cache when everything fits', () => {
    const s = streamOf([1, 2, 1, 2, 1])
    expect(lruHitReference(s, 100)).toEqual(infiniteHitCeiling(s))
  })

  it('misses every time a cycle is one chain larger than the cache, where Belady keeps some', () => {
    // Three chains of four blocks, cache of eight: LRU always evicts the next one needed.
    const s = streamOf([1, 2, 3, 1, 2, 3, 1, 2, 3])
    expect(lruHitReference(s, 8).hitTokens).toBe(0)
    expect(capacityHitCeiling(s, 8).hitTokens).toBeGreaterThan(0)
  })

  it('keeps what was used recently', () => {
    // 1, 2, 1, 3, 1: chain 1 stays hot in a cache of eight blocks; 2 is evicted for 3.
    const hit = lruHitReference(streamOf([1, 2, 1, 3, 1]), 8)
    expect(hit.hitTokens).toBe(2 * 4 * 16)
  })
})
