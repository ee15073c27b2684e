import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PodId } from '../../../shared/kv-index/kv-index.ts'
import type { TierCounts, TierEvent, TierHoldings } from '../../../shared/kv-index/tier-holdings.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'

const stored = (medium: string, ...engineHashes: bigint[]): TierEvent => ({
  type: 'stored',
  medium,
  engineHashes,
})
const removed = (medium: string, ...engineHashes: bigint[]): TierEvent => ({
  type: 'removed',
  medium,
  engineHashes,
})
const cleared: TierEvent = { type: 'cleared' }

/** The contract written plainly (nested Maps of reference counts): what both must answer. */
class ReferenceTierHoldings {
  private readonly pods = new Map<
    PodId,
    { seq: bigint | null; tiers: Map<string, Map<bigint, number>> }
  >()
  private readonly maxHashes: number
  private readonly maxTiers: number
  constructor(maxHashes: number, maxTiers: number) {
    this.maxHashes = maxHashes
    this.maxTiers = maxTiers
  }

  apply(pod: PodId, events: readonly TierEvent[], seq?: bigint): { duplicate: boolean } {
    const state = this.pods.get(pod) ?? { seq: null, tiers: new Map() }
    if (seq !== undefined && state.seq !== null && seq <= state.seq) return { duplicate: true }
    this.pods.set(pod, state)
    if (seq !== undefined) state.seq = seq
    for (const event of events) {
      if (event.type === 'cleared') {
        state.tiers.clear()
        continue
      }
      let tier = state.tiers.get(event.medium)
      if (event.type === 'stored') {
        if (tier === undefined && state.tiers.size >= this.maxTiers) continue
        tier ??= new Map()
        for (const hash of event.engineHashes) tier.set(hash, (tier.get(hash) ?? 0) + 1)
        if (tier.size > this.maxHashes) tier.clear()
      } else if (tier !== undefined) {
        for (const hash of event.engineHashes) {
          const left = (tier.get(hash) ?? 0) - 1
          if (left > 0) tier.set(hash, left)
          else tier.delete(hash)
        }
      }
      if (tier === undefined || tier.size === 0) state.tiers.delete(event.medium)
      else state.tiers.set(event.medium, tier)
    }
    return { duplicate: false }
  }

  holds(pod: PodId, medium: string, hashes: readonly bigint[]): boolean[] {
    const tier = this.pods.get(pod)?.tiers.get(medium)
    return hashes.map((hash) => tier?.has(hash) ?? false)
  }

  counts(pods: readonly PodId[]): TierCounts[] {
    return pods.map((pod) =>
      Object.fromEntries([...(this.pods.get(pod)?.tiers ?? [])].map(([m, t]) => [m, t.size])),
    )
  }

  dropPod(pod: PodId): void {
    this.pods.delete(pod)
  }
}

/**
 * The TierHoldings contract, run against every implementation. `create` gives a fresh,
 * empty instance with maxHashesPerTier 64 and maxTiersPerPod 3 (closed after each test).
 */
export function describeTierHoldingsConformance(
  name: string,
  create: () => Promise<TierHoldings>,
): void {
  describe(`${name}: TierHoldings conformance`, () => {
    let tiers: TierHoldings
    beforeEach(async () => {
      tiers = await create()
    })
    afterEach(async () => {
      await tiers.close()
    })

    it('holds what a pod stored per medium, apart from other media and pods', async () => {
      await tiers.apply('pod-a', [stored('CPU', 1n, 2n, 3n), stored('STORAGE', 3n)])
      await tiers.apply('pod-b', [stored('CPU', 9n)])
      expect(await tiers.holds('pod-a', 'CPU', [1n, 3n, 9n])).toEqual([true, true, false])
      expect(await tiers.holds('pod-a', 'STORAGE', [1n, 3n])).toEqual([false, true])
      expect(await tiers.holds('pod-a', 'GPU', [1n])).toEqual([false])
      expect(await tiers.holds('nobody', 'CPU', [1n])).toEqual([false])
      expect(await tiers.holds('pod-a', 'CPU', [])).toEqual([])
      expect(await tiers.counts(['pod-a', 'pod-b', 'nobody'])).toEqual([
        { CPU: 3, STORAGE: 1 },
        { CPU: 1 },
        {},
      ])
      expect(await tiers.counts([])).toEqual([])
    })

    it('holds a hash stored n times until it is removed n times (one per chunk)', async () => {
      await tiers.apply('pod-a', [stored('CPU', 1n, 2n), stored('CPU', 2n, 2n)])
      await tiers.apply('pod-a', [removed('CPU', 1n, 2n, 2n)])
      expect(await tiers.holds('pod-a', 'CPU', [1n, 2n])).toEqual([false, true])
      await tiers.apply('pod-a', [removed('CPU', 2n, 2n, 7n), removed('FS', 2n)])
      expect(await tiers.holds('pod-a', 'CPU', [2n])).toEqual([false])
      expect(await tiers.counts(['pod-a'])).toEqual([{}])
    })

    it('AllBlocksCleared empties every tier of the pod, and later events count afresh', async () => {
      await tiers.apply('pod-a', [stored('CPU', 1n), stored('OBJ', 2n)])
      await tiers.apply('pod-b', [stored('CPU', 1n)])
      await tiers.apply('pod-a', [cleared, stored('CPU', 5n)])
      expect(await tiers.counts(['pod-a', 'pod-b'])).toEqual([{ CPU: 1 }, { CPU: 1 }])
      expect(await tiers.holds('pod-a', 'CPU', [1n, 5n])).toEqual([false, true])
    })

    it('applies a batch once per seq; dropPod forgets the pod and its seq', async () => {
      expect(await tiers.apply('pod-a', [stored('CPU', 1n)], 4n)).toEqual({ duplicate: false })
      expect(await tiers.apply('pod-a', [stored('CPU', 1n)], 4n)).toEqual({ duplicate: true })
      expect(await tiers.apply('pod-a', [removed('CPU', 1n)], 3n)).toEqual({ duplicate: true })
      expect(await tiers.holds('pod-a', 'CPU', [1n])).toEqual([true])
      expect(await tiers.apply('pod-b', [stored('CPU', 1n)], 0n)).toEqual({ duplicate: false })
      await tiers.dropPod('pod-a')
      await tiers.dropPod('never-seen')
      expect(await tiers.counts(['pod-a', 'pod-b'])).toEqual([{}, { CPU: 1 }])
      expect(await tiers.apply('pod-a', [stored('CPU', 2n)], 0n)).toEqual({ duplicate: false })
      expect(await tiers.holds('pod-a', 'CPU', [1n, 2n])).toEqual([false, true])
    })

    it('empties a tier past maxHashesPerTier and ignores media past maxTiersPerPod', async () => {
      const many = Array.from({ length: 65 }, (_, i) => BigInt(i + 1))
      await tiers.apply('pod-a', [stored('CPU', ...many.slice(0, 64)), stored('FS', 1n)])
      expect(await tiers.counts(['pod-a'])).toEqual([{ CPU: 64, FS: 1 }])
      await tiers.apply('pod-a', [stored('CPU', 65n)])
      expect(await tiers.counts(['pod-a'])).toEqual([{ FS: 1 }])
      await tiers.apply('pod-a', [stored('CPU', 1n), stored('OBJ', 1n), stored('X', 1n)])
      expect(await tiers.counts(['pod-a'])).toEqual([{ FS: 1, CPU: 1, OBJ: 1 }])
      await tiers.apply('pod-a', [removed('OBJ', 1n), stored('X', 1n)])
      expect(await tiers.counts(['pod-a'])).toEqual([{ FS: 1, CPU: 1, X: 1 }])
    })

    it('takes any medium name and hash, folded modulo 2^64, and ignores what is no hash', async () => {
      await tiers.apply('p:q', [
        stored('__proto__', -1n, 5n),
        stored('a:b', 1n << 64n),
        { type: 'stored', medium: '', engineHashes: ['x' as unknown as bigint] },
      ])
      await tiers.apply('p', [stored(':qa:b', 1n)])
      expect(await tiers.holds('p:q', '__proto__', [(1n << 64n) - 1n, 5n])).toEqual([true, true])
      expect(await tiers.holds('p:q', 'a:b', [0n, 'x' as unknown as bigint])).toEqual([true, false])
      const [counts] = await tiers.counts(['p:q'])
      expect(Object.entries(counts ?? {}).sort()).toEqual([
        ['__proto__', 2],
        ['a:b', 1],
      ])
      expect(await tiers.counts(['p'])).toEqual([{ ':qa:b': 1 }])
    })

    it('answers as a plain reference model over random batches', async () => {
      const reference = new ReferenceTierHoldings(64, 3)
      const random = createSeededRandom(20_270_101)
      const int = (n: number) => Math.floor(random() * n)
      const pods = ['pod-0', 'pod-1', 'pod-2']
      const media = ['CPU', 'STORAGE', 'FS', 'OBJ']
      const seqs = new Map<string, bigint>()
      for (let step = 0; step < 600; step++) {
        const pod = pods[int(pods.length)] as string
        const roll = random()
        if (roll < 0.7) {
          const events: TierEvent[] = []
          for (let n = 1 + int(3); n > 0; n--) {
            const kind = random()
            const medium = media[int(kind < 0.9 ? 2 : media.length)] as string
            const hashes = Array.from({ length: 1 + int(4) }, () => BigInt(1 + int(40)))
            if (kind < 0.55) events.push(stored(medium, ...hashes))
            else if (kind < 0.97) events.push(removed(medium, ...hashes))
            else events.push(cleared)
          }
          // Now and then a seq at or below the last: a replica that came second.
          const last = seqs.get(pod) ?? -1n
          const seq = random() < 0.1 ? last : last + 1n
          if (seq >= 0n) seqs.set(pod, seq > last ? seq : last)
          const guarded = seq >= 0n ? seq : undefined
          expect(await tiers.apply(pod, events, guarded), `step ${step}`).toEqual(
            reference.apply(pod, events, guarded),
          )
        } else if (roll < 0.75) {
          seqs.delete(pod)
          reference.dropPod(pod)
          await tiers.dropPod(pod)
        } else {
          const medium = media[int(media.length)] as string
          const hashes = Array.from({ length: 6 }, () => BigInt(1 + int(40)))
          expect(await tiers.holds(pod, medium, hashes), `step ${step}`).toEqual(
            reference.holds(pod, medium, hashes),
          )
          expect(await tiers.counts(pods), `step ${step}`).toEqual(reference.counts(pods))
        }
      }
    })
  })
}
