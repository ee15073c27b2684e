import { describe, expect, it } from 'vitest'
import { AttentionGroup } from '../../../control-plane/kv-events/attention-group.ts'
import type {
  BlockRemoved,
  BlockStored,
  KvCacheEvent,
} from '../../../control-plane/kv-events/kv-cache-event.ts'
import { toPodEvents } from '../../../control-plane/kv-events/to-pod-events.ts'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'

const model = 'model-a'
const tokens = Array.from({ length: 64 }, (_, i) => 500 + i)
const chain16 = computeBlockKeys(tokens, 16, { model })

function stored(fields: Partial<BlockStored> & Pick<BlockStored, 'blockHashes'>): BlockStored {
  return {
    type: 'BlockStored',
    parentBlockHash: null,
    tokenIds: tokens,
    blockSize: 16,
    loraId: null,
    medium: 'GPU',
    loraName: null,
    ...fields,
  }
}
const removed = (blockHashes: bigint[], groupIdx?: number): BlockRemoved => ({
  type: 'BlockRemoved',
  blockHashes,
  medium: 'GPU',
  ...(groupIdx === undefined ? {} : { groupIdx }),
})
const hashes = [11n, 12n, 13n, 14n]

/** Applies batches of one pod as the scorer's ingestor does: one AttentionGroup for all. */
async function indexOf(...batches: KvCacheEvent[][]) {
  const index = createMemoryKvIndex()
  const groups = new AttentionGroup()
  const sizes: (number | null)[] = []
  for (const batch of batches) {
    const split = toPodEvents(batch, groups)
    sizes.push(split.blockSize)
    await index.apply('pod', model, split.index)
  }
  return { index, sizes, groups }
}

describe('toPodEvents and a hybrid model’s KV-cache groups (docs/vllm-wire.md §1.8)', () => {
  const attention = { groupIdx: 0, kvCacheSpecKind: 'full_attention' }
  const window = { groupIdx: 1, kvCacheSpecKind: 'sliding_window', kvCacheSpecSlidingWindow: 32 }

  it('indexes the full-attention group; a window group’s removal of a shared hash changes nothing', async () => {
    const { index, sizes } = await indexOf(
      [stored({ blockHashes: hashes, ...attention }), stored({ blockHashes: hashes, ...window })],
      // The window group evicts blocks it left behind: the same hashes, its own group.
      [removed(hashes.slice(0, 2), 1)],
    )
    expect(await index.lookup(chain16, ['pod'], 0)).toEqual([4])
    expect(sizes).toEqual([16, null])
    // The attention group's own removal does apply.
    const split = toPodEvents([removed([hashes[1] as bigint], 0)])
    await index.apply('pod', model, split.index)
    expect(await index.lookup(chain16, ['pod'], 0)).toEqual([1])
  })

  it('never lets a window group’s blocks re-key an attention hash (null blocks, other sizes)', async () => {
    // A 32-token window group names every other attention hash with a 32-token block;
    // after null blocks, its hash i is not even token block i (§1.5).
    const { index, sizes } = await indexOf([
      stored({ blockHashes: hashes, ...attention }),
      stored({ blockHashes: [12n, 14n], blockSize: 32, ...window }),
      stored({ blockHashes: [14n], tokenIds: tokens.slice(0, 32), blockSize: 32, ...window }),
    ])
    expect(await index.lookup(chain16, ['pod'], 0)).toEqual([4])
    expect(sizes).toEqual([16])
  })

  it('learns the attention group by its kind, wherever it is numbered, and its block size', async () => {
    const { index, sizes, groups } = await indexOf(
      [
        stored({ blockHashes: [13n, 14n], blockSize: 32, groupIdx: 0, kvCacheSpecKind: 'mamba' }),
        stored({
          blockHashes: [21n, 22n],
          blockSize: 32,
          groupIdx: 1,
          kvCacheSpecKind: 'mla_attention',
        }),
      ],
      [removed([21n], 0)],
    )
    expect(groups.learned).toBe(1)
    expect(sizes).toEqual([32, null])
    const chain32 = computeBlockKeys(tokens, 32, { model })
    expect(await index.lookup(chain32, ['pod'], 0)).toEqual([2])
    expect(await index.lookup(chain16, ['pod'], 0)).toEqual([0])
  })

  it('takes group 0 without kinds (before vLLM #40984), and every event without group_idx', async () => {
    const withoutKind = await indexOf([
      stored({ blockHashes: hashes, groupIdx: 0 }),
      stored({ blockHashes: [31n, 32n], blockSize: 32, groupIdx: 1 }),
      removed([11n], 1),
    ])
    expect(await withoutKind.index.lookup(chain16, ['pod'], 0)).toEqual([4])
    // A kind that says neither (vLLM's "unknown") is judged as no kind at all.
    const unknownKind = await indexOf([
      stored({ blockHashes: hashes, groupIdx: 0, kvCacheSpecKind: 'unknown' }),
    ])
    expect(await unknownKind.index.lookup(chain16, ['pod'], 0)).toEqual([4])
    const withoutGroup = await indexOf([stored({ blockHashes: hashes }), removed([13n])])
    expect(await withoutGroup.index.lookup(chain16, ['pod'], 0)).toEqual([2])
  })

  it('keeps only the attention group’s blocks among the tiers too', () => {
    const groups = new AttentionGroup()
    const split = toPodEvents(
      [
        stored({ blockHashes: hashes, ...attention }),
        stored({ blockHashes: hashes, medium: 'CPU', tokenIds: [], blockSize: 0, groupIdx: 0 }),
        stored({ blockHashes: [12n, 14n], medium: 'CPU', tokenIds: [], blockSize: 0, groupIdx: 1 }),
        { type: 'BlockRemoved', blockHashes: [12n], medium: 'CPU', groupIdx: 1 },
      ],
      groups,
    )
    expect(split.tiers).toEqual([{ type: 'stored', medium: 'CPU', engineHashes: hashes }])
  })
})

describe('toPodEvents and extra keys (docs/vllm-wire.md §1.9)', () => {
  // Blocks 2 and 3 are an image's placeholder tokens, identical for every image.
  const image = (id: string) => [[], [], [[id, 0]], [[id, -16]]]
  const typedImage = (id: string) => [
    null,
    null,
    [{ type: 'mm', modality: 'image', hash: id, block_offset: 0 }],
    [{ type: 'mm', modality: 'image', hash: id, block_offset: -16 }],
  ]

  async function keysHeld(event: BlockStored, chain: Uint32Array): Promise<number> {
    const index = createMemoryKvIndex()
    await index.apply('pod', model, toPodEvents([event]).index)
    return (await index.lookup(chain, ['pod'], 0))[0] as number
  }

  it('keeps two images behind the same placeholder tokens apart, plain or typed alike', async () => {
    const index = createMemoryKvIndex()
    await index.apply(
      'a',
      model,
      toPodEvents([stored({ blockHashes: hashes, extraKeys: image('img-A') })]).index,
    )
    await index.apply(
      'b',
      model,
      toPodEvents([stored({ blockHashes: hashes, extraKeys: typedImage('img-A') })]).index,
    )
    await index.apply(
      'c',
      model,
      toPodEvents([stored({ blockHashes: hashes, extraKeys: image('img-B') })]).index,
    )
    // Keyed without the image, a request matches the text before it, no further.
    expect(await index.lookup(chain16, ['a', 'b', 'c'], 0)).toEqual([2, 2, 2])
    // Read back from pod a's blocks: the same image in either form, never the other one.
    const split = toPodEvents([stored({ blockHashes: hashes, extraKeys: image('img-A') })])
    const extras = (split.index[0] as { blockExtras?: (string | null)[] }).blockExtras ?? null
    const chainA = computeBlockKeys(tokens, 16, { model }, extras)
    expect(await index.lookup(chainA, ['a', 'b', 'c'], 0)).toEqual([4, 4, 2])
  })

  it('keeps cache_salt in both forms, and takes the LoRA name from lora_name or a typed key', async () => {
    const salted = computeBlockKeys(tokens, 16, { model, loraName: 'ad', cacheSalt: 'tenant' })
    const plain = stored({
      blockHashes: hashes,
      loraName: 'ad',
      extraKeys: [['ad', 'tenant'], ['ad']],
    })
    const typed = stored({
      blockHashes: hashes,
      loraName: null,
      extraKeys: [
        [
          { type: 'lora', name: 'ad' },
          { type: 'cache_salt', salt: 'tenant' },
        ],
        [{ type: 'lora', name: 'ad' }],
      ],
    })
    expect(await keysHeld(plain, salted)).toBe(4)
    expect(await keysHeld(typed, salted)).toBe(4)
    // Without its salt, or with another adapter, a request matches nothing.
    expect(await keysHeld(typed, computeBlockKeys(tokens, 16, { model, loraName: 'ad' }))).toBe(0)
    expect(
      await keysHeld(
        plain,
        computeBlockKeys(tokens, 16, { model, loraName: 'x', cacheSalt: 'tenant' }),
      ),
    ).toBe(0)
    // A legacy-wrapped salt is a plain one.
    const legacy = stored({
      blockHashes: hashes,
      extraKeys: [[{ type: 'legacy', value: 'tenant' }]],
    })
    expect(
      await keysHeld(legacy, computeBlockKeys(tokens, 16, { model, cacheSalt: 'tenant' })),
    ).toBe(4)
  })

  it('puts keys it does not know into their block, so that block matches no request', async () => {
    const embedded = stored({
      blockHashes: hashes,
      extraKeys: [null, [{ type: 'prompt_embeds', hash: 'ab' }], [new Uint8Array([1, 2])], null],
    })
    expect(await keysHeld(embedded, chain16)).toBe(1)
  })
})
