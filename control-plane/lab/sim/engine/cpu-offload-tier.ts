import type { EngineKvEvent } from './engine-kv-event.ts'
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

/**
 * The CPU tier of vLLM's OffloadingConnector: an LRU of blocks keyed by group and block
 * hash (`vllm/v1/kv_offload/`, the LRU manager's prepare_store evicts the least recently
 * used blocks to make room, and stores nothing when it cannot). Its events are the
 * connector's (`offloading/events.py`, `OffloadingEventsTracker`): one BlockStored per
 * stored block, medium "CPU", either a placeholder (block_size 0, no token ids, no parent,
 * no LoRA) or, self-describing, the block's own payload for full-attention groups; one
 * BlockRemoved per group for the blocks evicted together. Transfers are instantaneous
 * here: a block is stored in the step that fills it and loaded in the step that hits it.
 */
export class CpuOffloadTier {
  private readonly blocks = new Map<string, OffloadedBlock>()
  private readonly capacity: number
  private readonly selfDescribing: boolean
  private readonly events: EngineKvEvent[]

  constructor(capacity: number, selfDescribing: boolean, events: EngineKvEvent[]) {
    this.capacity = capacity
    this.selfDescribing = selfDescribing
    this.events = events
  }

  get size(): number {
    return this.blocks.size
  }

  /**
   * How many consecutive blocks of `group`, from index `from` and below `limit`, the tier
   * holds; they become the most recently used.
   */
  load(group: number, hashOf: (index: number) => bigint, from: number, limit: number): number {
    let found = 0
    for (let index = from; index < limit; index++) {
      const key = keyOf(group, hashOf(index))
      const block = this.blocks.get(key)
      if (block === undefined) break
      this.blocks.delete(key)
      this.blocks.set(key, block)
      found++
    }
    return found
  }

  /** Copies blocks in, evicting the least recently used ones to make room. */
  store(blocks: readonly OffloadedBlock[]): void {
    const fresh = blocks.filter((block) => !this.blocks.has(keyOf(block.group.index, block.hash)))
    if (fresh.length === 0 || fresh.length > this.capacity) return
    const evicted = new Map<number, bigint[]>()
    for (const [key, block] of this.blocks) {
      if (this.blocks.size + fresh.length <= this.capacity) break
      this.blocks.delete(key)
      const hashes = evicted.get(block.group.index)
      if (hashes) hashes.push(block.hash)
      else evicted.set(block.group.index, [block.hash])
    }
    for (const [groupIdx, blockHashes] of evicted) {
      this.events.push({ type: 'BlockRemoved', medium: 'CPU', blockHashes, groupIdx })
    }
    for (const block of fresh) {
      this.blocks.set(keyOf(block.group.index, block.hash), block)
      this.events.push(this.storedEvent(block))
    }
  }

  private storedEvent(block: OffloadedBlock): EngineKvEvent {
    const { group } = block
    if (this.selfDescribing && group.spec.kind === 'full_attention') {
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
