import { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
import { KinfError } from '../errors/kinf-error.ts'
import { BlockKeyTable } from './block-key-table.ts'
import type { BlockKeyChain, KeyPair } from './block-keys.ts'
import { ExpiryQueue } from './expiry-queue.ts'
import type { ApplyResult, IndexEvent, KvIndex, PodId } from './kv-index.ts'
import { KvIndexLimits, wholeNumber } from './kv-index-limits.ts'
import { matchPrefixes } from './match-prefixes.ts'
import { PodHoldings } from './pod-holdings.ts'
import { storedBlockCount, storedBlockKeys } from './stored-block-keys.ts'

/**
 * Options of the embedded index. Past maxEngineHashesPerPod the pod's oldest-stored hash is
 * forgotten (its block turns cold); past maxSpeculative the oldest written entry goes.
 */
export const MemoryKvIndexOptions = KvIndexLimits.extend({
  maxPods: wholeNumber(1)
    .default(1024)
    .describe(
      "Pods at once (8 bytes per block key per 32 pods); apply and addSpeculative for one more reject with 'invalid_config'",
    ),
  tableSeed: z
    .int({ error: 'must be an integer' })
    .default(0)
    .describe('Seed of the hash-table probe positions (a random one against crafted collisions)'),
  initialBlocks: wholeNumber(1)
    .default(1024)
    .describe('Initial block-key capacity (grows by doubling)'),
})
export type MemoryKvIndexOptions = z.infer<typeof MemoryKvIndexOptions>
export type MemoryKvIndexOptionsInput = z.input<typeof MemoryKvIndexOptions>

/**
 * The embedded KvIndex: everything in one process, no I/O. Block keys live once in a
 * BlockKeyTable with a stored and a speculative bit per pod slot; each pod maps its engine
 * hashes to those entries (PodHoldings), which resolves BlockRemoved and chains BlockStored
 * events onto a parent stored in any earlier batch.
 */
export function createMemoryKvIndex(input: MemoryKvIndexOptionsInput = {}): KvIndex {
  const options = parseOptions(MemoryKvIndexOptions, input, 'kv index')
  const { maxPods, purgePerLookup } = options
  const maxHashes = options.maxEngineHashesPerPod
  const table = new BlockKeyTable(options.initialBlocks, options.tableSeed)
  const expiries = new ExpiryQueue(options.maxSpeculative)
  const pods = new Map<PodId, PodHoldings>()
  const bySlot: (PodHoldings | undefined)[] = []
  const freeSlots: number[] = []
  const lastSeq = new Map<PodId, bigint>()

  function podFor(pod: PodId): PodHoldings {
    const known = pods.get(pod)
    if (known !== undefined) return known
    if (pods.size >= maxPods) {
      throw new KinfError(
        'invalid_config',
        `kv index: more than maxPods (${maxPods}) pods hold blocks; raise maxPods`,
      )
    }
    const slot = freeSlots.pop() ?? bySlot.length
    table.ensureSlot(slot)
    const holdings = new PodHoldings(pod, slot)
    pods.set(pod, holdings)
    bySlot[slot] = holdings
    return holdings
  }

  function releaseIfEmpty(holdings: PodHoldings): void {
    if (!holdings.isEmpty || pods.get(holdings.name) !== holdings) return
    pods.delete(holdings.name)
    bySlot[holdings.slot] = undefined
    freeSlots.push(holdings.slot)
  }

  // An item is current only if its pod (by slot) still holds that entry until that expiry.
  function expireItem(id: number, slot: number, expiry: number): void {
    const holdings = bySlot[slot]
    if (holdings === undefined || holdings.speculative.get(id) !== expiry) return
    holdings.dropSpeculative(table, id)
    releaseIfEmpty(holdings)
  }

  function applySync(pod: PodId, model: string, events: readonly IndexEvent[]): ApplyResult {
    const result: ApplyResult = {
      stored: 0,
      removed: 0,
      unknownParents: 0,
      unknownRemovals: 0,
      duplicate: false,
    }
    // All or nothing: the one failure (no room for a new pod) is checked before any write.
    let holdings = pods.get(pod)
    if (holdings === undefined && events.some((event) => event.type === 'stored')) {
      holdings = podFor(pod)
    }
    for (const event of events) {
      if (event.type === 'cleared') {
        holdings?.clear(table)
      } else if (event.type === 'removed') {
        const hashes = Array.isArray(event.engineHashes) ? event.engineHashes : []
        for (const hash of hashes) {
          if (holdings?.remove(table, hash)) result.removed++
          else result.unknownRemovals++
        }
      } else if (event.type === 'stored' && holdings !== undefined) {
        let parent: KeyPair | null = null
        if (event.parentEngineHash !== null) {
          const id = holdings.entryOf(event.parentEngineHash)
          if (id === -1) {
            result.unknownParents++
            continue
          }
          parent = { high: table.keyHigh[id] as number, low: table.keyLow[id] as number }
        }
        const count = storedBlockCount(event)
        if (count === 0) continue
        const keys = storedBlockKeys(event, parent, model)
        for (let i = 0; i < count; i++) {
          const hash = event.engineHashes[i] as bigint
          holdings.store(table, hash, keys[2 * i] as number, keys[2 * i + 1] as number, maxHashes)
        }
        result.stored += count
      }
    }
    if (holdings !== undefined) releaseIfEmpty(holdings)
    return result
  }

  return {
    async apply(pod, model, events, seq) {
      if (seq !== undefined) {
        const last = lastSeq.get(pod)
        if (last !== undefined && seq <= last) {
          return { stored: 0, removed: 0, unknownParents: 0, unknownRemovals: 0, duplicate: true }
        }
        lastSeq.set(pod, seq)
      }
      return applySync(pod, model, events)
    },

    async lookup(chain: BlockKeyChain, podNames, nowMs) {
      for (let i = 0; i < purgePerLookup && expiries.peekExpiry() <= nowMs; i++) {
        expiries.shift(expireItem)
      }
      const slots = podNames.map((name) => pods.get(name)?.slot ?? -1)
      const depthBySlot = matchPrefixes(
        table,
        chain,
        slots,
        (slot, id) => (bySlot[slot]?.speculative.get(id) ?? Number.NEGATIVE_INFINITY) > nowMs,
      )
      return slots.map((slot) => (slot < 0 ? 0 : (depthBySlot[slot] as number)))
    },

    async addSpeculative(pod, chain, blocks, expiresAtMs) {
      const count = Math.min(Math.floor(blocks), chain.length >>> 1)
      if (!(count > 0) || Number.isNaN(expiresAtMs)) return
      const holdings = podFor(pod)
      for (let i = 0; i < count; i++) {
        const id = table.acquire(chain[2 * i] as number, chain[2 * i + 1] as number)
        if (!holdings.addSpeculative(table, id, expiresAtMs)) continue
        // Evicted after the add: this pod now holds the new entry, so it cannot be released.
        if (expiries.full) expiries.shift(expireItem)
        expiries.push(id, holdings.slot, expiresAtMs)
      }
    },

    async dropPod(pod) {
      lastSeq.delete(pod)
      const holdings = pods.get(pod)
      if (holdings === undefined) return
      holdings.clear(table)
      releaseIfEmpty(holdings)
    },

    async storedBlocks(podNames) {
      return podNames.map((pod) => pods.get(pod)?.storedEntries ?? 0)
    },

    async size() {
      let entries = 0
      let held = 0
      for (const holdings of pods.values()) {
        const count = holdings.entryCount(table)
        entries += count
        if (count > 0) held++
      }
      return { entries, pods: held }
    },

    async close() {
      for (const holdings of pods.values()) holdings.clear(table)
      pods.clear()
      bySlot.length = 0
      freeSlots.length = 0
      expiries.clear()
    },
  }
}
