import { describe, expect, it } from 'vitest'
import { mmBlockExtras, mmExtraKey } from '../../../shared/kv-index/mm-block-extras.ts'

// Worked by hand from vLLM's block hasher (_gen_mm_extra_hash_keys, docs/vllm-wire.md
// §1.9): a block carries (identifier, input offset − block start) for every input whose
// placeholder range overlaps it, in prompt order.

describe('the multimodal extras of a prompt’s blocks', () => {
  it('names each input in every block its range overlaps, by its offset from the block', () => {
    // An image over tokens 5..44 and one over 44..47, blocks of 16 tokens.
    const extras = mmBlockExtras(
      [
        { identifier: 'cat', offset: 5, length: 39 },
        { identifier: 'dog', offset: 44, length: 4 },
      ],
      16,
      4,
    )
    expect(Array.from(extras ?? [])).toEqual([
      mmExtraKey('cat', 5),
      mmExtraKey('cat', -11),
      `${mmExtraKey('cat', -27)}\u0001${mmExtraKey('dog', 12)}`,
      null,
    ])
  })

  it('is none for a prompt without inputs or whose inputs lie past its full blocks', () => {
    expect(mmBlockExtras([], 16, 3)).toBeNull()
    expect(mmBlockExtras([{ identifier: 'cat', offset: 48, length: 8 }], 16, 3)).toBeNull()
  })

  it('tells the same image at two positions of equal blocks apart', () => {
    const at = (offset: number) => mmBlockExtras([{ identifier: 'cat', offset, length: 4 }], 16, 1)
    expect(at(0)?.[0]).not.toBe(at(4)?.[0])
  })
})
