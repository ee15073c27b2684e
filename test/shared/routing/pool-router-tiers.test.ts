import { describe, expect, it } from 'vitest'
import type { RoutingSpecInput } from '../../../shared/crd/routing-spec.ts'
import type { IndexEvent } from '../../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createMemoryTierHoldings } from '../../../shared/kv-index/memory-tier-holdings.ts'
import { TierLookup } from '../../../shared/kv-index/tier-lookup.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { PoolRouter, type RoutingDecision } from '../../../shared/routing/pool-router.ts'
import { builtinStrategies } from '../../../shared/routing/strategies/strategy-registry.ts'
import { poolSpec } from '../../support/recording-pool-router.ts'

const pods = ['a', 'b', 'c']
const prompt = (seed: number, length: number) =>
  Array.from({ length }, (_, i) => 1000 + ((seed * 7919 + i * 31) % 50_000))

/** A pool router over pods a, b, c; with `tiered`, its feeds and lookups go through a TierLookup. */
function setup(routing: RoutingSpecInput, tiered: boolean) {
  const tiers = tiered ? new TierLookup(createMemoryTierHoldings()) : null
  const base = createMemoryKvIndex()
  const index = tiers ? tiers.index(base) : base
  let now = 0
  const router = new PoolRouter({
    name: 'p',
    spec: poolSpec(routing),
    index,
    ...(tiers && { tiers }),
    random: createSeededRandom(7),
    indexNowMs: () => now,
    onError: (message) => {
      throw new Error(message)
    },
  })
  for (const pod of pods) {
    router.addPod(pod, 0)
    router.setIndexReady(pod, true)
  }
  /** The pod's GPU stores the prompt's blocks as hashes from `base` on (and the CPU copies them). */
  const store = async (pod: string, ids: number[], base: number, seq: bigint) => {
    const blocks = Math.floor(ids.length / 16)
    const hashes = Array.from({ length: blocks }, (_, i) => BigInt(base + i))
    const event: IndexEvent = {
      type: 'stored',
      engineHashes: hashes,
      parentEngineHash: null,
      tokenIds: ids.slice(0, blocks * 16),
      blockSize: 16,
      loraName: null,
      cacheSalt: null,
    }
    await index.apply(pod, 'm', [event], seq)
    return hashes
  }
  const prepare = (id: string, ids: number[]) =>
    router.prepare({
      id,
      model: 'm',
      promptIds: ids,
      maxTokens: 32,
      cacheSalt: null,
      promptText: () => String(ids),
    })
  return { router, index, tiers, store, prepare, setNow: (ms: number) => (now = ms) }
}

describe('PoolRouter with tier holdings', () => {
  it('looks up the CPU blocks continuing each pod’s GPU hit and shows them to the strategy', async () => {
    const { router, index, tiers, store, prepare } = setup({ strategy: 'kinference' }, true)
    const ids = prompt(1, 3_200)
    await tiers?.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: [1n] }], 0n)
    const hashes = await store('a', ids, 100, 1n)
    await tiers?.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: hashes }], 1n)
    await index.apply('a', 'm', [{ type: 'removed', engineHashes: hashes.slice(10) }], 2n)
    const lookup = await router.lookup(prepare('r', ids))
    expect(lookup.blocks.get('a')).toBe(10)
    expect(lookup.tierBlocks?.get('a')).toEqual({ CPU: 190 })
    expect(lookup.tierBlocks?.has('b')).toBe(false)
    const route = router.score(lookup, 0)
    expect(route.candidates.find((c) => c.name === 'a')?.tierBlocks).toEqual({ CPU: 190 })
    expect(route.candidates.find((c) => c.name === 'b')?.tierBlocks).toBeUndefined()
    // The pod loads the CPU blocks instead of recomputing them: kinference sends it there.
    expect(route.decision.pod).toBe('a')
    expect(router.matchedTokens(lookup, 'a')).toBe(200 * 16 - 16)
  })

  it('expects the pod to report the loaded tokens as cached: its trust holds', async () => {
    const { router, index, tiers, store, prepare } = setup({ strategy: 'kinference' }, true)
    await tiers?.holdings.apply('a', [{ type: 'stored', medium: 'CPU', engineHashes: [1n] }], 0n)
    for (let i = 0; i < 8; i++) {
      const ids = prompt(10 + i, 1_600)
      const hashes = await store('a', ids, 1_000 * (i + 1), BigInt(2 * i + 1))
      await tiers?.holdings.apply(
        'a',
        [{ type: 'stored', medium: 'CPU', engineHashes: hashes }],
        BigInt(2 * i + 1),
      )
      await index.apply(
        'a',
        'm',
        [{ type: 'removed', engineHashes: hashes.slice(5) }],
        BigInt(2 * i + 2),
      )
      const lookup = await router.lookup(prepare(`r${i}`, ids))
      router.dispatchNow(lookup, i * 1_000, { route: router.score(lookup, i * 1_000) })
      router.firstToken(`r${i}`, i * 1_000 + 100)
      // vLLM counts the connector's tokens in cached_tokens (all but the last block here).
      router.finished(`r${i}`, i * 1_000 + 500, 99 * 16)
    }
    const report = router.podReports(10_000).find((p) => p.name === 'a')
    expect(report?.trust).toBe('precise')
    expect(report?.drift).toBeLessThan(0.02)
  })
})

/** Every built-in strategy and variant, as a pool's routing block names it. */
const routings: RoutingSpecInput[] = builtinStrategies.flatMap((definition) => [
  { strategy: definition.name } as RoutingSpecInput,
  ...Object.values(definition.variants ?? {}).map(
    (parameters) =>
      ({
        strategy: definition.name,
        [definition.parameters?.block as string]: parameters,
      }) as RoutingSpecInput,
  ),
])

async function decisions(routing: RoutingSpecInput, tiered: boolean): Promise<RoutingDecision[]> {
  const { router, tiers, store, prepare, setNow } = setup(routing, tiered)
  // Pod c announces a CPU tier holding blocks of nothing asked: the lookup runs, finds none.
  await tiers?.holdings.apply('c', [{ type: 'stored', medium: 'CPU', engineHashes: [5n, 6n] }], 0n)
  const prefixes = [0, 1, 2, 3].map((p) => prompt(100 + p, 1_024))
  let seq = 1n
  for (const [i, prefix] of prefixes.entries())
    await store(pods[i % 3] as string, prefix, 10_000 * (i + 1), seq++)
  const out: RoutingDecision[] = []
  for (let r = 0; r < 40; r++) {
    const ids = [...(prefixes[(r * 7) % 4] as number[]), ...prompt(1_000 + r, 200 + r * 13)]
    setNow(r * 150)
    const lookup = await router.lookup(prepare(`r${r}`, ids))
    expect(lookup.tierBlocks).toBeUndefined()
    const route = router.dispatchNow(lookup, r * 150)
    out.push(route.decision)
    if (r % 3 === 0) router.firstToken(`r${r - 1}`, r * 150)
    if (r % 4 === 0) router.finished(`r${r - 2}`, r * 150 + 10, 512)
  }
  return out
}

describe('without CPU blocks to find, every strategy decides as without tier holdings', () => {
  it.each(routings.map((routing) => [JSON.stringify(routing), routing] as const))(
    '%s',
    async (_, routing) => {
      const plain = await decisions(routing, false)
      const tiered = await decisions(routing, true)
      expect(new Set(plain.map((d) => d.pod)).size).toBeGreaterThan(0)
      expect(tiered).toEqual(plain)
    },
  )
})
