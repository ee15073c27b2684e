import { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
import { type BlockKeyChain, foldKey, type KeyPair } from './block-keys.ts'
import type { IndexEvent, KvIndex, PodId } from './kv-index.ts'
import { wholeNumber } from './kv-index-limits.ts'
import { storedBlockCount, storedBlockKeys } from './stored-block-keys.ts'
import type { TierEvent, TierHoldings } from './tier-holdings.ts'

/**
 * Per medium ("CPU", …), how many blocks of a request a pod holds there, consecutively from
 * the end of its GPU hit; media with none are left out.
 */
export type TierBlocks = Readonly<Record<string, number>>

export const TierLookupOptions = z.strictObject({
  maxKeysPerPod: wholeNumber(1)
    .default(262_144)
    .describe(
      'Block keys per pod whose engine hash is remembered after the GPU dropped the block (4x the L40S profile’s GPU blocks ~ 24,000); the oldest-stored go first',
    ),
})
export type TierLookupOptionsInput = z.input<typeof TierLookupOptions>

/** Media asked per pod at most: the tier holdings' default maxTiersPerPod. */
const maxMedia = 8

/** One pod's memory: engine hash → our key (to chain a child on), folded key → engine hash. */
interface PodKeys {
  byHash: Map<bigint, KeyPair>
  byKey: Map<number, bigint>
  /** Media the pod's tier events stored into. */
  media: Set<string>
}

/**
 * The request's blocks in a pod's other tiers. Tier holdings know engine hashes only (a
 * connector's placeholder events carry no tokens, tier-holdings.ts), and the router keys a
 * request by token ids (block-keys.ts): the index maps a pod's engine hashes to keys only
 * while the GPU holds the block, so it forgets exactly the blocks a CPU tier keeps. This
 * remembers, per pod, the engine hash of every block key its GPU events stored, past their
 * removal from the GPU (bounded, oldest first), so a request's keys past its GPU hit give
 * the hashes to ask the tier holdings for. An offloaded block's hash is the GPU block's
 * (events.py, see TierEvent), and vLLM's OffloadingConnector stores a block to CPU as it
 * fills, after the GPU's BlockStored of the same step (kv-events-options.ts in the
 * simulator, `events.extend(connector_events)`).
 *
 * A pod's GPU events are remembered only once its first tier event has been seen: a pool
 * without tiers costs nothing, and a pod's first tiered batch is missed (its blocks are
 * found again once re-stored). Feeds apply through `index(…)` and `holdings`, which pass
 * everything on unchanged.
 */
export class TierLookup {
  readonly holdings: TierHoldings
  private readonly pods = new Map<PodId, PodKeys>()
  private readonly maxKeysPerPod: number

  constructor(tiers: TierHoldings, input: TierLookupOptionsInput = {}) {
    this.maxKeysPerPod = parseOptions(TierLookupOptions, input, 'tier lookup').maxKeysPerPod
    this.holdings = this.watchTiers(tiers)
  }

  /** `index` as feeds apply to it: its GPU events are also remembered here. */
  index(index: KvIndex): KvIndex {
    return {
      apply: async (pod, model, events, seq) => {
        this.observe(pod, model, events)
        return index.apply(pod, model, events, seq)
      },
      lookup: (chain, pods, nowMs) => index.lookup(chain, pods, nowMs),
      addSpeculative: (pod, chain, blocks, expiresAtMs) =>
        index.addSpeculative(pod, chain, blocks, expiresAtMs),
      dropPod: async (pod) => {
        this.pods.delete(pod)
        await index.dropPod(pod)
      },
      storedBlocks: (pods) => index.storedBlocks(pods),
      size: () => index.size(),
      close: () => index.close(),
    }
  }

  /** Whether any pod has shown a tier: without one a lookup asks nothing. */
  get active(): boolean {
    for (const keys of this.pods.values()) if (keys.media.size > 0) return true
    return false
  }

  /**
   * Per pod (aligned with `pods`), the blocks of `chain` it holds per medium, each counted
   * consecutively from `gpuBlocks[i]` (its GPU hit) until the first block the medium does
   * not hold: a block after a gap cannot be loaded into the chain. One `holds` per pod and
   * medium, all at once (one round trip to a shared store), and none for a pod with no
   * tier or no remembered key past its GPU hit.
   */
  async lookup(
    chain: BlockKeyChain,
    pods: readonly PodId[],
    gpuBlocks: readonly number[],
  ): Promise<TierBlocks[]> {
    const asks = pods.map((pod, i) => this.ask(pod, chain, gpuBlocks[i] ?? 0))
    return Promise.all(asks)
  }

  private async ask(pod: PodId, chain: BlockKeyChain, from: number): Promise<TierBlocks> {
    const keys = this.pods.get(pod)
    if (keys === undefined || keys.media.size === 0) return {}
    const hashes: bigint[] = []
    for (let block = Math.max(0, from); 2 * block + 1 < chain.length; block++) {
      const hash = keys.byKey.get(
        foldKey(chain[2 * block] as number, chain[2 * block + 1] as number),
      )
      if (hash === undefined) break
      hashes.push(hash)
    }
    if (hashes.length === 0) return {}
    const media = [...keys.media]
    const held = await Promise.all(media.map((medium) => this.holdings.holds(pod, medium, hashes)))
    const out: Record<string, number> = {}
    media.forEach((medium, m) => {
      const flags = held[m] as boolean[]
      let run = 0
      while (run < flags.length && flags[run] === true) run++
      if (run > 0) out[medium] = run
    })
    return out
  }

  /** The pod's GPU events: each stored block's key by engine hash, chained on its parent. */
  private observe(pod: PodId, model: string, events: readonly IndexEvent[]): void {
    const keys = this.pods.get(pod)
    if (keys === undefined || keys.media.size === 0) return
    for (const event of events) {
      if (event.type === 'cleared') this.forget(keys)
      if (event.type !== 'stored') continue
      let parent: KeyPair | null = null
      if (event.parentEngineHash !== null) {
        parent = keys.byHash.get(event.parentEngineHash) ?? null
        if (parent === null) continue
      }
      const count = storedBlockCount(event)
      if (count === 0) continue
      const chain = storedBlockKeys(event, parent, model)
      for (let i = 0; i < count; i++) {
        const high = chain[2 * i] as number
        const low = chain[2 * i + 1] as number
        this.remember(keys, event.engineHashes[i] as bigint, high, low)
      }
    }
  }

  private remember(keys: PodKeys, hash: bigint, high: number, low: number): void {
    const folded = foldKey(high, low)
    keys.byHash.delete(hash)
    keys.byHash.set(hash, { high, low })
    keys.byKey.set(folded, hash)
    if (keys.byHash.size <= this.maxKeysPerPod) return
    const [oldest, key] = keys.byHash.entries().next().value as [bigint, KeyPair]
    keys.byHash.delete(oldest)
    const foldedOldest = foldKey(key.high, key.low)
    if (keys.byKey.get(foldedOldest) === oldest) keys.byKey.delete(foldedOldest)
  }

  private forget(keys: PodKeys): void {
    keys.byHash.clear()
    keys.byKey.clear()
    keys.media.clear()
  }

  /** `tiers` as feeds apply to it: the media each pod stores into are noted. */
  private watchTiers(tiers: TierHoldings): TierHoldings {
    const noteMedia = (pod: PodId, events: readonly TierEvent[]) => {
      for (const event of events) {
        const keys = this.pods.get(pod)
        if (event.type === 'cleared') {
          if (keys) this.forget(keys)
        } else if (event.type === 'stored') {
          if (keys && keys.media.size < maxMedia) keys.media.add(event.medium)
          else if (!keys)
            this.pods.set(pod, {
              byHash: new Map(),
              byKey: new Map(),
              media: new Set([event.medium]),
            })
        }
      }
    }
    return {
      apply: async (pod, events, seq) => {
        noteMedia(pod, events)
        return tiers.apply(pod, events, seq)
      },
      holds: (pod, medium, hashes) => tiers.holds(pod, medium, hashes),
      counts: (pods) => tiers.counts(pods),
      dropPod: async (pod) => {
        this.pods.delete(pod)
        await tiers.dropPod(pod)
      },
      close: () => tiers.close(),
    }
  }
}
