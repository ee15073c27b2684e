import { describe, expect, it } from 'vitest'
import {
  blockExtraKeys,
  checkMultimodal,
  type ExtraKeySource,
} from '../../../../../control-plane/lab/sim/engine/block-extra-keys.ts'

const plain: ExtraKeySource = { loraName: null, cacheSalt: null, multimodal: [] }

describe('blockExtraKeys (generate_block_hash_extra_keys)', () => {
  it('is null for a block of a plain request', () => {
    expect(blockExtraKeys(plain, 0, 16)).toBe(null)
  })

  it('puts the LoRA name in every block and cache_salt in the first only, after it', () => {
    const source = { ...plain, loraName: 'sql', cacheSalt: 'tenant-a' }
    expect(blockExtraKeys(source, 0, 16)).toEqual([
      { kind: 'lora', name: 'sql' },
      { kind: 'cache_salt', salt: 'tenant-a' },
    ])
    expect(blockExtraKeys(source, 16, 32)).toEqual([{ kind: 'lora', name: 'sql' }])
  })

  it('names each multimodal input a block overlaps with its offset from the block start', () => {
    const source: ExtraKeySource = {
      ...plain,
      multimodal: [
        { identifier: 'img-a', offset: 10, length: 30 },
        { identifier: 'img-b', offset: 40, length: 4, modality: 'audio' },
      ],
    }
    const mm = (identifier: string, offset: number, modality = 'image') => ({
      kind: 'mm',
      identifier,
      offset,
      modality,
    })
    expect(blockExtraKeys(source, 0, 16)).toEqual([mm('img-a', 10)])
    // The image began in an earlier block: a negative offset, as vLLM computes it.
    expect(blockExtraKeys(source, 16, 32)).toEqual([mm('img-a', -6)])
    expect(blockExtraKeys(source, 32, 48)).toEqual([mm('img-a', -22), mm('img-b', 8, 'audio')])
    expect(blockExtraKeys(source, 48, 64)).toBe(null)
  })
})

describe('checkMultimodal', () => {
  it('accepts sorted, separate ranges inside the prompt', () => {
    expect(() =>
      checkMultimodal(
        [
          { identifier: 'a', offset: 0, length: 4 },
          { identifier: 'b', offset: 4, length: 4 },
        ],
        8,
      ),
    ).not.toThrow()
  })

  it.each([
    [[{ identifier: '', offset: 0, length: 4 }], /identifier/],
    [[{ identifier: 'a', offset: 0, length: 0 }], /length/],
    [[{ identifier: 'a', offset: 1.5, length: 2 }], /integers/],
    [[{ identifier: 'a', offset: 6, length: 4 }], /leave the 8-token prompt/],
    [
      [
        { identifier: 'a', offset: 2, length: 4 },
        { identifier: 'b', offset: 4, length: 2 },
      ],
      /overlap/,
    ],
  ])('refuses %o as invalid_request', (features, message) => {
    expect(() => checkMultimodal(features, 8)).toThrow(message)
    expect(() => checkMultimodal(features, 8)).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    )
  })
})
