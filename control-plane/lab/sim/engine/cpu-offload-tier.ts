import type { EngineKvEvent } from './engine-kv-event.ts'
import type { HostLink } from './host-link.ts'
import type { KvCacheGroup } from './kv-cache-layout.ts'

/** A block copied to CPU memory, with what a self-describing event says about it. */
export interface OffloadedBlock {
  group: KvCacheGroup
  hash: bigint
  parent: bigint | null
  tokenIds: number[]
  loraName: string | null
  loraId: number | null
}

/** A block in the tier: readable once its store has completed, pinned while loads read it. */
interface Entry {
  block: OffloadedBlock
  ready: boolean
  loads: number
}

interface Transfer {
  endMs: number
  entries: Entry[]
}

export interface CpuOffloadTierOptions {
  capacity: number
  selfDescribing: boolean
  /** Where the connector's events go (the manager's connector batch). */
  events: EngineKvEvent[]
  link: HostLink
  /** Bytes one block of a group moves over the link. */
  blockBytes: (group: KvCacheGroup) => number
}

/** What a lookup found after the GPU hit. */
export interface TierHit {
  /** Consecutive blocks the tier holds. */
  blocks: number
  /** One of them is still being stored, or loaded for another request: try again later. */
  deferred: boolean
}

/**
 * The CPU tier of vLLM's OffloadingConnector: an LRU of blocks keyed by group and block
 * hash, with its transfers over the host link (`vllm/v1/kv_offload/lru_manager.py`,
 * `cpu/manager.py`). A store is prepared when the scheduler hands the blocks over:
 * the least recently used blocks that are readable and not being loaded are evicted to
 * make room (nothing is stored when too few are), and announced removed at once. The
 * copy itself starts when the step that computed the blocks ends (the worker defers it
 * "so that offloading starts AFTER transfers related to token sampling",
 * `offloading/worker.py`), never delays a step, and the blocks become readable, and are
 * announced stored, only when it completes (`complete_store`). A load pins its blocks
 * until it completes. Events are the
 * connector's (`offloading/events.py`): one BlockStored per block, medium "CPU", a
 * placeholder (block_size 0, no token ids, no parent, no LoRA) or, self-describing, the
 * block's own payload for full-attention groups; one BlockRemoved per group for the blocks
 * evicted together.
 */
export class CpuOffloadTier {
  private readonly entries = new Map<string, Entry>()
  private readonly options: CpuOffloadTierOptions
  private prepared: Entry[][] = []
  private stores: Transfer[] = []
  private loading: Transfer[] = []

  constructor(options: CpuOffloadTierOptions) {
    this.options = options
  }

  get size(): number {
    return this.entries.size
  }

  /** Loads under way. */
  get loads(): number {
    return this.loading.length
  }

  /** When the first transfer under way ends (null when none is). */
  get nextTransferEndMs(): number | null {
    const ends = [this.stores[0]?.endMs, this.loading[0]?.endMs].filter((end) => end !== undefined)
    return ends.length > 0 ? Math.min(...ends) : null
  }

  /**
   * How many consecutive blocks of `group`, from index `from` and below `limit`, the tier
   * holds; they become the most recently used. The lookup is deferred when one of them is
   * still being stored (`cpu/manager.py`: HIT_PENDING, and the connector's
   * `_maximal_prefix_lookup` then asks the scheduler to try again) or being loaded for
   * another request (`_blocks_being_loaded`).
   */
  lookup(group: number, hashOf: (index: number) => bigint, from: number, limit: number): TierHit {
    let blocks = 0
    let deferred = false
    for (let index = from; index < limit; index++) {
      const key = keyOf(group, hashOf(index))
      const entry = this.entries.get(key)
      if (entry === undefined) break
      this.entries.delete(key)
      this.entries.set(key, entry)
      if (!entry.ready || entry.loads > 0) deferred = true
      blocks++
    }
    return { blocks, deferred }
  }

  /** Starts loading `count` blocks of `group` from `from` at `startMs`; returns its end. */
  load(
    group: number,
    hashOf: (index: number) => bigint,
    from: number,
    count: number,
    startMs: number,
  ): number {
    const entries: Entry[] = []
    let bytes = 0
    for (let index = from; index < from + count; index++) {
      const entry = this.entries.get(keyOf(group, hashOf(index)))
      if (entry === undefined) throw new Error('a load of a block the CPU tier does not hold')
      entries.push(entry)
      bytes += this.options.blockBytes(entry.block.group)
    }
    const endMs = this.options.link.transfer('load', startMs, bytes)
    for (const entry of entries) entry.loads++
    // One queue per direction: loads end in the order they start.
    this.loading.push({ endMs, entries })
    return endMs
  }

  /** Prepares a store of the blocks it lacks, evicting idle blocks to make room. */
  store(blocks: readonly OffloadedBlock[]): void {
    const fresh = blocks.filter((block) => !this.entries.has(keyOf(block.group.index, block.hash)))
    if (fresh.length === 0) return
    const excess = this.entries.size + fresh.length - this.options.capacity
    const victims: [string, Entry][] = []
    for (const item of this.entries) {
      if (victims.length >= excess) break
      if (item[1].ready && item[1].loads === 0) victims.push(item)
    }
    if (victims.length < excess) return
    const evicted = new Map<number, bigint[]>()
    for (const [key, { block }] of victims) {
      this.entries.delete(key)
      const hashes = evicted.get(block.group.index)
      if (hashes) hashes.push(block.hash)
      else evicted.set(block.group.index, [block.hash])
    }
    for (const [groupIdx, blockHashes] of evicted) {
      this.options.events.push({ type: 'BlockRemoved', medium: 'CPU', blockHashes, groupIdx })
    }
    const entries = fresh.map((block) => ({ block, ready: false, loads: 0 }))
    for (const entry of entries) {
      this.entries.set(keyOf(entry.block.group.index, entry.block.hash), entry)
    }
    this.prepared.push(entries)
  }

  /** Starts the copies prepared since the last call, at `startMs` (a step's end). */
  submitStores(startMs: number): void {
    for (const entries of this.prepared) {
      const bytes = entries.reduce(
        (sum, entry) => sum + this.options.blockBytes(entry.block.group),
        0,
      )
      this.stores.push({ endMs: this.options.link.transfer('store', startMs, bytes), entries })
    }
    this.prepared = []
  }

  /** Completes the transfers ended by `nowMs`: stored blocks become readable and announced. */
  settle(nowMs: number): void {
    while (this.stores[0] !== undefined && this.stores[0].endMs <= nowMs) {
      for (const entry of this.stores.shift()?.entries ?? []) {
        entry.ready = true
        this.options.events.push(this.storedEvent(entry.block))
      }
    }
    while (this.loading[0] !== undefined && this.loading[0].endMs <= nowMs) {
      for (const entry of this.loading.shift()?.entries ?? []) entry.loads--
    }
  }

  private storedEvent(block: OffloadedBlock): EngineKvEvent {
    const { group } = block
    if (this.options.selfDescribing && group.spec.kind === 'full_attention') {
      return {
        type: 'BlockStored',
        medium: 'CPU',
        blockHashes: [block.hash],
        parentBlockHash: block.parent,
        tokenIds: block.tokenIds,
        blockSize: group.blockSize,
        loraName: block.loraName,
        loraId: block.loraId,
        extraKeys: null,
        groupIdx: group.index,
        kvCacheSpec: group.spec,
      }
    }
    return {
      type: 'BlockStored',
      medium: 'CPU',
      blockHashes: [block.hash],
      parentBlockHash: null,
      tokenIds: [],
      blockSize: 0,
      loraName: null,
      loraId: null,
      extraKeys: null,
      groupIdx: group.index,
      kvCacheSpec: null,
    }
  }
}

function keyOf(group: number, hash: bigint): string {
  return `${group}:${hash}`
}
