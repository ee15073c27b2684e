import { describe, expect, it } from 'vitest'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import type { IndexEvent } from '../../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createMemoryTierHoldings } from '../../../shared/kv-index/memory-tier-holdings.ts'
import { TierLookup } from '../../../shared/kv-index/tier-lookup.ts'

// A pod's GPU stores a prompt's 6 blocks (engine hashes 101…106), the CPU tier copies
// them as they fill (as vLLM's OffloadingConnector does), then the GPU evicts the last 4.
const tokens = Array.from({ length: 6 * 16 }, (_, i) => 1_000 + i)
const keys = computeBlockKeys(tokens, 16, { model: 'm' })
const hashes = [101n, 102n, 103n, 104n, 105n, 106n]
const stored: IndexEvent = {
  type: 'stored',
  engineHashes: hashes,
  parentEngineHash: null,
  tokenIds: tokens,
  blockSize: 16,
  loraName: null,
  cacheSalt: null,
}

async function podWithCpu(cpu: readonly bigint[]) {
  const tiers = new TierLookup(createMemoryTierHoldings())
  const index = tiers.index(createMemoryKvIndex())
  // The pod's first tiered batch announces the tier; its blocks come in the next ones.
  await tiers.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: [999n] }], 0n)
  await index.apply('a', 'm', [stored], 1n)
  await tiers.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: cpu }], 1n)
  await index.apply('a', 'm', [{ type: 'removed', engineHashes: hashes.slice(2) }], 2n)
  return { tiers, index }
}

describe('TierLookup', () => {
  it('counts the CPU blocks continuing the GPU hit, after the GPU evicted them', async () => {
    const { tiers, index } = await podWithCpu(hashes)
    const [gpu] = await index.lookup(keys, ['a'], 0)
    expect(gpu).toBe(2)
    expect(await tiers.lookup(keys, ['a', 'b'], [2, 0])).toEqual([{ CPU: 4 }, {}])
    // From another GPU hit on, the chain continues from there.
    expect(await tiers.lookup(keys, ['a'], [4])).toEqual([{ CPU: 2 }])
  })

  it('stops at the first block the tier lacks: a block after a gap is not counted', async () => {
    const { tiers } = await podWithCpu([101n, 102n, 103n, 105n, 106n])
    expect(await tiers.lookup(keys, ['a'], [2])).toEqual([{ CPU: 1 }])
    const { tiers: none } = await podWithCpu([101n, 102n, 104n, 105n, 106n])
    expect(await none.lookup(keys, ['a'], [2])).toEqual([{}])
  })

  it('asks nothing before a pod shows a tier, and forgets a pod its tiers cleared', async () => {
    const tiers = new TierLookup(createMemoryTierHoldings())
    const index = tiers.index(createMemoryKvIndex())
    await index.apply('a', 'm', [stored], 0n)
    expect(tiers.active).toBe(false)
    await tiers.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: hashes }], 0n)
    expect(tiers.active).toBe(true)
    // The GPU events came before the pod's first tier event: not remembered.
    expect(await tiers.lookup(keys, ['a'], [0])).toEqual([{}])
    const { tiers: cleared } = await podWithCpu(hashes)
    await cleared.holdings.apply('a', [{ type: 'cleared' }], 3n)
    expect(cleared.active).toBe(false)
    expect(await cleared.lookup(keys, ['a'], [2])).toEqual([{}])
  })

  it('remembers at most maxKeysPerPod keys per pod, the oldest stored going first', async () => {
    const tiers = new TierLookup(createMemoryTierHoldings(), { maxKeysPerPod: 3 })
    const index = tiers.index(createMemoryKvIndex())
    await tiers.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: [999n] }], 0n)
    await index.apply('a', 'm', [stored], 1n)
    await tiers.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: hashes }], 1n)
    // Blocks 0-2 forgotten: from block 0 nothing is known, from block 3 the three last.
    expect(await tiers.lookup(keys, ['a'], [0])).toEqual([{}])
    expect(await tiers.lookup(keys, ['a'], [3])).toEqual([{ CPU: 3 }])
  })
})
