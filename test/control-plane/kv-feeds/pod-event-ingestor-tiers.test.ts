import { describe, expect, it } from 'vitest'
import type { BlockStored } from '../../../control-plane/kv-events/kv-cache-event.ts'
import { PodEventIngestor } from '../../../control-plane/kv-feeds/pod-event-ingestor.ts'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createMemoryTierHoldings } from '../../../shared/kv-index/memory-tier-holdings.ts'
import type { TierHoldings } from '../../../shared/kv-index/tier-holdings.ts'
import { eventBatch as batch, blockStored } from '../../support/kv-feeds/block-stored.ts'
import { ingestorOptions } from '../../support/kv-feeds/ingestor-options.ts'

// vLLM's OffloadingConnector publishes its CPU-tier events in the step's batch, after the
// engine's GPU events (docs/vllm-wire.md §1.7): placeholders with block_size 0 and no
// tokens, or, self-describing, with the GPU block's tokens and parent. Neither may ever
// count as a GPU prefix-cache hit.

const model = 'model-a'
const tokens = Array.from({ length: 48 }, (_, i) => 1000 + i)
const chain = computeBlockKeys(tokens, 16, { model })

const block = (
  medium: string,
  blockHashes: bigint[],
  parentBlockHash: bigint | null,
  tokenIds: number[],
  blockSize: number,
): BlockStored => blockStored(blockHashes, tokenIds, { medium, parentBlockHash, blockSize })

/** An ingestor on a fresh memory index and tier holdings, failing on any error it hears. */
async function ingestorWithTiers() {
  const index = createMemoryKvIndex()
  const tiers = createMemoryTierHoldings()
  const ingestor = new PodEventIngestor(
    ingestorOptions({
      model,
      index,
      tiers,
      onError: (message) => {
        throw new Error(message)
      },
    }),
  )
  await ingestor.start()
  return { index, tiers, ingestor }
}

describe('PodEventIngestor with a CPU offload tier', () => {
  it('applies a mixed batch: GPU events to the index, CPU events to the tiers', async () => {
    const { index, tiers, ingestor } = await ingestorWithTiers()
    await ingestor.receive(
      0n,
      batch(
        block('GPU', [1n, 2n], null, tokens.slice(0, 32), 16),
        // The connector's placeholders: the same hashes, and one the GPU no longer holds.
        block('CPU', [1n, 2n, 9n], null, [], 0),
      ),
    )
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([2])
    expect(await index.storedBlocks(['pod-a'])).toEqual([2])
    expect(await tiers.counts(['pod-a'])).toEqual([{ CPU: 3 }])
    expect(await tiers.holds('pod-a', 'CPU', [1n, 2n, 9n, 3n])).toEqual([true, true, true, false])
    expect(ingestor.counters).toMatchObject({ batches: 1, applyErrors: 0, tierErrors: 0 })
  })

  it('never counts a GPU hit from CPU holdings, placeholders or self-describing', async () => {
    const { index, tiers, ingestor } = await ingestorWithTiers()
    await ingestor.receive(0n, batch(block('GPU', [1n, 2n], null, tokens.slice(0, 32), 16)))
    await ingestor.receive(
      1n,
      batch(
        // The GPU evicts both blocks after the connector copied them to CPU memory.
        { type: 'BlockRemoved', blockHashes: [1n, 2n], medium: 'GPU' },
        block('CPU', [1n, 2n], null, [], 0),
        // Self-describing CPU events carry tokens, a parent and a block size: still CPU.
        block('CPU', [3n], 2n, tokens.slice(32, 48), 16),
        block('CPU', [7n], null, tokens.slice(0, 16), 16),
      ),
    )
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
    expect(await index.storedBlocks(['pod-a'])).toEqual([0])
    expect(await index.size()).toEqual({ entries: 0, pods: 0 })
    expect(await tiers.holds('pod-a', 'CPU', [1n, 2n, 3n, 7n])).toEqual([true, true, true, true])
    // A CPU removal leaves the GPU index alone, and the other way round.
    await ingestor.receive(2n, batch(block('GPU', [1n], null, tokens.slice(0, 16), 16)))
    await ingestor.receive(3n, batch({ type: 'BlockRemoved', blockHashes: [1n], medium: 'CPU' }))
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([1])
    expect(await tiers.holds('pod-a', 'CPU', [1n, 2n])).toEqual([false, true])
  })

  it('AllBlocksCleared empties both, and losing the pod drops its tiers with its index', async () => {
    const { index, tiers, ingestor } = await ingestorWithTiers()
    await ingestor.receive(
      0n,
      batch(block('GPU', [1n], null, tokens.slice(0, 16), 16), block('CPU', [1n], null, [], 0)),
    )
    await ingestor.receive(1n, batch({ type: 'AllBlocksCleared' }, block('CPU', [5n], null, [], 0)))
    expect(await index.storedBlocks(['pod-a'])).toEqual([0])
    expect(await tiers.counts(['pod-a'])).toEqual([{ CPU: 1 }])
    await ingestor.suspend()
    expect(await tiers.counts(['pod-a'])).toEqual([{}])
  })

  it('keeps the GPU index when the tiers fail, and drops only the tiers', async () => {
    const index = createMemoryKvIndex()
    const memory = createMemoryTierHoldings()
    const errors: string[] = []
    const failing: TierHoldings = {
      ...memory,
      apply: async () => {
        throw new Error('tiers down')
      },
    }
    const ingestor = new PodEventIngestor(
      ingestorOptions({ model, index, tiers: failing, onError: (message) => errors.push(message) }),
    )
    await ingestor.start()
    await ingestor.receive(
      0n,
      batch(block('GPU', [1n], null, tokens.slice(0, 16), 16), block('CPU', [1n], null, [], 0)),
    )
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([1])
    expect(ingestor.appliedSeq).toBe(0n)
    expect(ingestor.counters).toMatchObject({ batches: 1, tierErrors: 1, applyErrors: 0 })
    expect(errors).toEqual(['pod-a: tier events of batch 0 failed: tiers down'])
  })
})
