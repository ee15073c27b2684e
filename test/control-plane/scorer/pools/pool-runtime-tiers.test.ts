import { describe, expect, it } from 'vitest'
import { PoolRuntime } from '../../../../control-plane/scorer/pools/pool-runtime.ts'
import { TokenizerCache } from '../../../../control-plane/scorer/serving/tokenizer-cache.ts'
import { createMemoryKvIndex } from '../../../../shared/kv-index/memory-kv-index.ts'
import { createMemoryTierHoldings } from '../../../../shared/kv-index/memory-tier-holdings.ts'
import { TierLookup } from '../../../../shared/kv-index/tier-lookup.ts'
import { model, poolSpec } from '../../../support/scorer-stack.ts'

// The scorer wires its feeds through a TierLookup (start-scorer.ts) and hands it to every
// pool's router (pool-runtime-factory.ts): a pool's lookup then finds the blocks its pods
// keep in their CPU tiers past their GPU hits.

const ids = Array.from({ length: 640 }, (_, i) => 2_000 + i)
const hashes = Array.from({ length: 40 }, (_, i) => BigInt(500 + i))

async function runtime(withTiers: boolean) {
  const tiers = new TierLookup(createMemoryTierHoldings())
  const index = tiers.index(createMemoryKvIndex())
  const pool = new PoolRuntime({
    name: 'default',
    spec: poolSpec(),
    index,
    ...(withTiers && { tiers }),
    tokenizers: new TokenizerCache(),
    onError: () => {},
  })
  pool.router.addPod('a', 0)
  pool.router.setIndexReady('a', true)
  // What pod a's feed applies: a tier, the prompt's blocks, their copies, then the GPU
  // evicting all but the first 10.
  await tiers.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: [1n] }], 0n)
  const stored = {
    type: 'stored' as const,
    engineHashes: hashes,
    parentEngineHash: null,
    tokenIds: ids,
    blockSize: 16,
    loraName: null,
    cacheSalt: null,
  }
  await index.apply('a', model, [stored], 1n)
  await tiers.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: hashes }], 1n)
  await index.apply('a', model, [{ type: 'removed', engineHashes: hashes.slice(10) }], 2n)
  const request = pool.router.prepare({
    id: 'r',
    model,
    promptIds: ids,
    maxTokens: 8,
    cacheSalt: null,
    promptText: () => '',
  })
  return pool.router.lookup(request)
}

describe('a scorer pool with tier holdings', () => {
  it('looks up the CPU blocks past the GPU hit', async () => {
    const lookup = await runtime(true)
    expect(lookup.blocks.get('a')).toBe(10)
    expect(lookup.tierBlocks?.get('a')).toEqual({ CPU: 30 })
  })

  it('without them, sees the GPU hit alone', async () => {
    const lookup = await runtime(false)
    expect(lookup.blocks.get('a')).toBe(10)
    expect(lookup.tierBlocks).toBeUndefined()
  })
})
