/** KV-cache events as the engine produces them, in vLLM's terms (docs/vllm-wire.md §1.5). */
export type EngineKvEvent =
  | {
      type: 'BlockStored'
      blockHashes: bigint[]
      parentBlockHash: bigint | null
      tokenIds: number[]
      blockSize: number
      loraName: string | null
      /** Per block, as vLLM publishes them; only when the run starts a salted sequence. */
      extraKeys?: (string[] | null)[]
    }
  | { type: 'BlockRemoved'; blockHashes: bigint[] }
  | { type: 'AllBlocksCleared' }

const none = -1

/**
 * vLLM V1's BlockPool: a fixed set of GPU blocks (block 0 is the reserved null block),
 * reference counts, a map from block hash to cached blocks, and an LRU free list whose
 * head is evicted first. Freed blocks that hold a hash go to the tail (still hittable);
 * blocks without one go to the head (reused first). A cached block is evicted lazily,
 * when it is re-allocated, and only then is BlockRemoved emitted.
 */
export class BlockPool {
  readonly numBlocks: number
  private readonly refCount: Int32Array
  private readonly prev: Int32Array
  private readonly next: Int32Array
  private readonly hashes: (bigint | null)[]
  private readonly cached = new Map<bigint, number[]>()
  private head = none
  private tail = none
  private free = 0
  private readonly events: EngineKvEvent[]

  constructor(numBlocks: number, events: EngineKvEvent[]) {
    if (numBlocks < 2) throw new Error('a block pool needs at least 2 blocks')
    this.numBlocks = numBlocks
    this.refCount = new Int32Array(numBlocks)
    this.prev = new Int32Array(numBlocks).fill(none)
    this.next = new Int32Array(numBlocks).fill(none)
    this.hashes = new Array<bigint | null>(numBlocks).fill(null)
    this.events = events
    for (let block = 1; block < numBlocks; block++) this.pushTail(block)
  }

  get numFree(): number {
    return this.free
  }

  /** vLLM's kv_cache_usage_perc: 1 − free/(num_gpu_blocks − 1). */
  get usage(): number {
    return 1 - this.free / (this.numBlocks - 1)
  }

  /** Any block currently holding `hash`, or undefined. */
  lookup(hash: bigint): number | undefined {
    return this.cached.get(hash)?.[0]
  }

  isFree(block: number): boolean {
    return this.refCount[block] === 0
  }

  /** A prefix-cache hit: take the blocks off the free list if needed and reference them. */
  touch(blocks: readonly number[]): void {
    for (const block of blocks) {
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
      const count = (this.refCount[block] ?? 0) - 1
      this.refCount[block] = count
      if (count > 0) continue
      if (this.hashes[block] === null) this.pushHead(block)
      else this.pushTail(block)
    }
  }

  /** Marks a full block as cached under `hash`; duplicates of a hash are kept, as vLLM does. */
  cache(block: number, hash: bigint): void {
    this.hashes[block] = hash
    const holders = this.cached.get(hash)
    if (holders) holders.push(block)
    else this.cached.set(hash, [block])
  }

  /** reset_prefix_cache: succeeds only when no block is in use. */
  reset(): boolean {
    if (this.free !== this.numBlocks - 1) return false
    this.cached.clear()
    this.hashes.fill(null)
    this.events.push({ type: 'AllBlocksCleared' })
    return true
  }

  private evict(block: number): void {
    const hash = this.hashes[block]
    if (hash === null || hash === undefined) return
    this.hashes[block] = null
    const holders = this.cached.get(hash)
    if (holders) {
      const at = holders.indexOf(block)
      if (at >= 0) holders.splice(at, 1)
      if (holders.length === 0) this.cached.delete(hash)
    }
    this.events.push({ type: 'BlockRemoved', blockHashes: [hash] })
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
