import type { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
import { EngineHashTable } from './engine-hash-table.ts'
import type { PodId } from './kv-index.ts'
import { type TierEvent, type TierHoldings, TierHoldingsLimits } from './tier-holdings.ts'

const uint64Max = (1n << 64n) - 1n
/** Hashes modulo 2^64, as the decoder gives them and the Redis holdings key them. */
const toUint64 = (hash: bigint) => (hash < 0n || hash > uint64Max ? BigInt.asUintN(64, hash) : hash)

export type MemoryTierHoldingsOptionsInput = z.input<typeof TierHoldingsLimits>

interface PodTiers {
  lastSeq: bigint | null
  /** Medium → its hashes, each with how many times it is stored (the record's stores). */
  tiers: Map<string, EngineHashTable>
}

/**
 * Tier holdings in this process (see TierHoldings): per pod and medium an EngineHashTable,
 * whose store counts are the reference counts, so a hash costs typed-array slots, not a
 * Map<bigint, …> entry.
 */
export function createMemoryTierHoldings(input: MemoryTierHoldingsOptionsInput = {}): TierHoldings {
  const { maxHashesPerTier, maxTiersPerPod } = parseOptions(
    TierHoldingsLimits,
    input,
    'tier holdings',
  )
  const pods = new Map<PodId, PodTiers>()

  function tierOf(state: PodTiers, medium: string): EngineHashTable | undefined {
    let tier = state.tiers.get(medium)
    if (tier === undefined && state.tiers.size < maxTiersPerPod) {
      tier = new EngineHashTable()
      state.tiers.set(medium, tier)
    }
    return tier
  }

  function store(tier: EngineHashTable, hashes: readonly bigint[]): void {
    for (const hash of hashes) {
      if (typeof hash !== 'bigint') continue
      const folded = toUint64(hash)
      const record = tier.find(folded)
      if (record === -1) tier.insert(folded, 0)
      else tier.addStore(record)
    }
    if (tier.size > maxHashesPerTier) tier.clear()
  }

  function remove(tier: EngineHashTable, hashes: readonly bigint[]): void {
    for (const hash of hashes) {
      const record = typeof hash === 'bigint' ? tier.find(toUint64(hash)) : -1
      if (record !== -1) tier.removeStore(record)
    }
  }

  function applyTo(state: PodTiers, events: readonly TierEvent[]): void {
    for (const event of events) {
      if (event.type === 'cleared') {
        state.tiers.clear()
        continue
      }
      const tier =
        event.type === 'stored' ? tierOf(state, event.medium) : state.tiers.get(event.medium)
      if (tier === undefined) continue
      if (event.type === 'stored') store(tier, event.engineHashes)
      else remove(tier, event.engineHashes)
      if (tier.size === 0) state.tiers.delete(event.medium)
    }
  }

  return {
    async apply(pod, events, seq) {
      let state = pods.get(pod)
      if (seq !== undefined && state?.lastSeq != null && seq <= state.lastSeq) {
        return { duplicate: true }
      }
      if (state === undefined) {
        state = { lastSeq: null, tiers: new Map() }
        pods.set(pod, state)
      }
      if (seq !== undefined) state.lastSeq = seq
      applyTo(state, events)
      return { duplicate: false }
    },

    async holds(pod, medium, hashes) {
      const tier = pods.get(pod)?.tiers.get(medium)
      return hashes.map(
        (hash) =>
          tier !== undefined && typeof hash === 'bigint' && tier.find(toUint64(hash)) !== -1,
      )
    },

    async counts(podNames) {
      // fromEntries: a medium named "__proto__" is a key like any other.
      return podNames.map((pod) =>
        Object.fromEntries(
          [...(pods.get(pod)?.tiers ?? [])].map(([medium, tier]) => [medium, tier.size]),
        ),
      )
    },

    async dropPod(pod) {
      pods.delete(pod)
    },

    async close() {
      pods.clear()
    },
  }
}
