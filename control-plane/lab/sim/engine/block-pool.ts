import type { EngineKvEvent } from './engine-kv-event.ts'

export type { EngineKvEvent } from './engine-kv-event.ts'

const none = -1

/** Block 0: vLLM's null block, the placeholder of blocks a sliding window skipped. */
export const nullBlock = 0

/** Called when a cached block is evicted, with what was stored with it. */
export type EvictionListener<Payload> = (group: number, hash: bigint, payload: Payload) => void

/**
 * vLLM V1's BlockPool (`vllm/v1/core/block_pool.py`): a fixed set of GPU blocks shared by
 * every KV-cache group (block 0 is the reserved null block), reference counts, a map from
 * (group, block hash) to cached blocks, and an LRU free list whose head is evicted first.
 * Freed blocks that hold a hash go to the tail (still hittable); blocks without one go to
 * the head (reused first). A cached block is evicted lazily, when it is re-allocated, and
 * only then is BlockRemoved emitted, with its group.
 */
export class BlockPool<Payload = undefined> {
  readonly numBlocks: number
  private readonly refCount: Int32Array
  private readonly prev: Int32Array
  private readonly next: Int32Array
  private readonly hashes: (bigint | null)[]
  private readonly groups: Int32Array
  private readonly payloads: (Payload | undefined)[]
  private readonly cached: Map<bigint, number[]>[]
  private head = none
  private tail = none
  private free = 0
  private readonly events: EngineKvEvent[]
  private readonly onEvict: EvictionListener<Payload> | undefined

  constructor(
    numBlocks: number,
    events: EngineKvEvent[],
    options: { numGroups?: number; onEvict?: EvictionListener<Payload> } = {},
  ) {
    if (numBlocks < 2) throw new Error('a block pool needs at least 2 blocks')
    this.numBlocks = numBlocks
    this.refCount = new Int32Array(numBlocks)
    this.prev = new Int32Array(numBlocks).fill(none)
    this.next = new Int32Array(numBlocks).fill(none)
    this.hashes = new Array<bigint | null>(numBlocks).fill(null)
    this.groups = new Int32Array(numBlocks)
    this.payloads = new Array<Payload | undefined>(numBlocks)
    this.cached = Array.from({ length: options.numGroups ?? 1 }, () => new Map())
    this.events = events
    this.onEvict = options.onEvict
    for (let block = 1; block < numBlocks; block++) this.pushTail(block)
  }

  get numFree(): number {
    return this.free
  }

  /** vLLM's kv_cache_usage_perc: 1 − free/(num_gpu_blocks − 1). */
  get usage(): number {
    return 1 - this.free / (this.numBlocks - 1)
  }

  /** Any block of `group` currently holding `hash`, or undefined. */
  lookup(group: number, hash: bigint): number | undefined {
    return this.cached[group]?.get(hash)?.[0]
  }

  /** A block a hit would take off the free list (the null block never is). */
  isEvictable(block: number): boolean {
    return block !== nullBlock && this.refCount[block] === 0
  }

  /** A prefix-cache hit: take the blocks off the free list if needed and reference them. */
  touch(blocks: readonly number[]): void {
    for (const block of blocks) {
      if (block === nullBlock) continue
      if (this.refCount[block] === 0) this.unlink(block)
      this.refCount[block] = (this.refCount[block] ?? 0) + 1
    }
  }

  /** Pops `count` blocks from the head of the free list, evicting cached ones. */
  allocate(count: number): number[] {
    if (count > this.free) throw new Error(`cannot allocate ${count} blocks, ${this.free} free`)
    const blocks: number[] = []
    for (let i = 0; i < count; i++) {
      const block = this.head
      this.unlink(block)
      this.evict(block)
      this.refCount[block] = 1
      blocks.push(block)
    }
    return blocks
  }

  /** Releases blocks in the order given (callers pass a request's blocks tail first). */
  release(blocks: readonly number[]): void {
    for (const block of blocks) {
      if (block === nullBlock) continue
      const count = (this.refCount[block] ?? 0) - 1
      this.refCount[block] = count
      if (count > 0) continue
      if (this.hashes[block] === null) this.pushHead(block)
      else this.pushTail(block)
    }
  }

  /** Marks a full block of `group` as cached under `hash`; duplicates are kept, as in vLLM. */
  cache(block: number, group: number, hash: bigint, payload?: Payload): void {
    this.hashes[block] = hash
    this.groups[block] = group
    this.payloads[block] = payload
    const map = this.cached[group] as Map<bigint, number[]>
    const holders = map.get(hash)
    if (holders) holders.push(block)
    else map.set(hash, [block])
  }

  /** reset_prefix_cache: succeeds only when no block is in use. */
  reset(): boolean {
    if (this.free !== this.numBlocks - 1) return false
    for (const map of this.cached) map.clear()
    this.hashes.fill(null)
    this.payloads.fill(undefined)
    this.events.push({ type: 'AllBlocksCleared' })
    return true
  }

  private evict(block: number): void {
    const hash = this.hashes[block]
    if (hash === null || hash === undefined) return
    const group = this.groups[block] ?? 0
    const payload = this.payloads[block] as Payload
    this.hashes[block] = null
    this.payloads[block] = undefined
    const map = this.cached[group] as Map<bigint, number[]>
    const holders = map.get(hash)
    if (holders) {
      const at = holders.indexOf(block)
      if (at >= 0) holders.splice(at, 1)
      if (holders.length === 0) map.delete(hash)
    }
    this.events.push({ type: 'BlockRemoved', medium: 'GPU', blockHashes: [hash], groupIdx: group })
    this.onEvict?.(group, hash, payload)
  }

  private pushTail(block: number): void {
    this.prev[block] = this.tail
    this.next[block] = none
    if (this.tail === none) this.head = block
    else this.next[this.tail] = block
    this.tail = block
    this.free++
  }

  private pushHead(block: number): void {
    this.next[block] = this.head
    this.prev[block] = none
    if (this.head === none) this.tail = block
    else this.prev[this.head] = block
    this.head = block
    this.free++
  }

  private unlink(block: number): void {
    const before = this.prev[block] ?? none
    const after = this.next[block] ?? none
    if (before === none) this.head = after
    else this.next[before] = after
    if (after === none) this.tail = before
    else this.prev[after] = before
    this.prev[block] = none
    this.next[block] = none
    this.free--
  }
}
