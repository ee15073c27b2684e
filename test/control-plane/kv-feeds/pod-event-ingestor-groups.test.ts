import { describe, expect, it } from 'vitest'
import type { BlockStored } from '../../../control-plane/kv-events/kv-cache-event.ts'
import { PodEventIngestor } from '../../../control-plane/kv-feeds/pod-event-ingestor.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { eventBatch as batch, blockStored } from '../../support/kv-feeds/block-stored.ts'
import { ingestorOptions } from '../../support/kv-feeds/ingestor-options.ts'

// A hybrid model's KV-cache groups (docs/vllm-wire.md §1.8): the ingestor keeps which group
// is the full-attention one across batches, and tells the block size its events carry.

function group(groupIdx: number, kind: string, blockSize: number, first: bigint): BlockStored {
  const tokens = Array.from({ length: 64 }, (_, i) => Number(first) + i)
  const hashes = Array.from({ length: 64 / blockSize }, (_, i) => first + BigInt(i))
  return blockStored(hashes, tokens, { blockSize, groupIdx, kvCacheSpecKind: kind })
}

describe('PodEventIngestor with a hybrid model', () => {
  it('tells the attention group’s block size when first seen and when it changes', async () => {
    const index = createMemoryKvIndex()
    const sizes: number[] = []
    const ingestor = new PodEventIngestor(
      ingestorOptions({ model: 'm', index, onBlockSize: (size) => sizes.push(size) }),
    )
    await ingestor.start()
    expect(ingestor.blockSize).toBe(null)
    await ingestor.receive(
      0n,
      batch(group(0, 'sliding_window', 16, 100n), group(1, 'full_attention', 32, 200n)),
    )
    await ingestor.receive(1n, batch(group(1, 'full_attention', 32, 300n)))
    // The window group's removal, in a later batch, is not the attention group's.
    await ingestor.receive(
      2n,
      batch({ type: 'BlockRemoved', blockHashes: [200n, 201n], medium: 'GPU', groupIdx: 0 }),
    )
    expect(await index.storedBlocks(['pod-a'])).toEqual([4])
    await ingestor.receive(3n, batch(group(1, 'full_attention', 64, 400n)))
    expect(sizes).toEqual([32, 64])
    expect(ingestor.blockSize).toBe(64)
  })
})
