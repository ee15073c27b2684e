import { describe, expect, it } from 'vitest'
import { capacityHitCeiling } from '../../../../../control-plane/lab/bench/bounds/capacity-hit-ceiling.ts'
import { infiniteHitCeiling } from '../../../../../control-plane/lab/bench/bounds/hit-ceiling.ts'
import { request, stream } from './stream-request.ts'

/** Documents A, B, C of two blocks each (33 tokens), asked for in turn, `rounds` times. */
const cyclic = (rounds: number) =>
  stream(
    ...Array.from({ length: 3 * rounds }, (_, i) => {
      const doc = i % 3
      return request([2 * doc, 2 * doc + 1], 33)
    }),
  )

describe('capacityHitCeiling', () => {
  it('is the infinite-cache ceiling when every block fits', () => {
    const s = cyclic(3)
    expect(capacityHitCeiling(s, 6)).toMatchObject({
      hitTokens: infiniteHitCeiling(s).hitTokens,
      unheldBlocks: 0,
    })
    expect(capacityHitCeiling(s, 6).hitTokens).toBe(6 * 2 * 16)
  })

  it('keeps the document needed soonest when a cyclic stream does not fit (LRU would hit nothing)', () => {
    // Room for two documents of three: after the first round, Belady hits every other
    // request (A B C A B C A B C: hits at the 4th, 6th and 8th).
    const ceiling = capacityHitCeiling(cyclic(3), 4)
    expect(ceiling.hitTokens).toBe(3 * 2 * 16)
    expect(ceiling.promptTokens).toBe(9 * 33)
    expect(ceiling.unheldBlocks).toBe(0)
    // Room for one document and a spare block: the request being served pins two, so
    // the spare can only keep the first block of the document after next (4th, 6th, 8th).
    expect(capacityHitCeiling(cyclic(3), 3).hitTokens).toBe(3 * 16)
  })

  it('evicts what is never used again before a shared prefix', () => {
    // A four-block prefix, then a unique four-block tail per request; room for 8 blocks.
    const prefix = [100, 101, 102, 103]
    const s = stream(
      ...Array.from({ length: 5 }, (_, i) =>
        request([...prefix, i * 4, i * 4 + 1, i * 4 + 2, i * 4 + 3]),
      ),
    )
    const ceiling = capacityHitCeiling(s, 8)
    expect(ceiling.hitTokens).toBe(4 * 4 * 16)
    expect(ceiling.hitTokens).toBe(infiniteHitCeiling(s).hitTokens)
  })

  it('cannot hold a request larger than the cache, and says so', () => {
    const s = stream(request([1, 2, 3]), request([1, 2, 3]))
    const ceiling = capacityHitCeiling(s, 2)
    // The first two blocks are held, pinned; the third is computed and dropped.
    expect(ceiling.unheldBlocks).toBe(2)
    expect(ceiling.hitTokens).toBe(2 * 16)
    expect(ceiling.capacityBlocks).toBe(2)
  })

  it('keeps a later turn its history over an older unrelated block', () => {
    // Turn 1 of conversation X leaves prompt and answer blocks; Y comes between.
    const s = stream(request([1, 2], 40, [3]), request([8, 9], 40), request([1, 2, 3, 4], 70))
    expect(capacityHitCeiling(s, 5).hitTokens).toBe(3 * 16)
    // One block short: the answer block, deepest, goes before the prompt's.
    expect(capacityHitCeiling(s, 4).hitTokens).toBe(2 * 16)
    // Room for one request at a time: Y's blocks push X's history out.
    expect(capacityHitCeiling(s, 2).hitTokens).toBe(0)
  })
})
