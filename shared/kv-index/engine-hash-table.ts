import { PairIndex } from './pair-index.ts'

/** Splits a bigint into words without allocating (~3 ns, where `h & mask` costs ~60). */
const scratch = new DataView(new ArrayBuffer(8))
/** Records allocated up front (a power of two); the table doubles as its pod stores more. */
const initialRecords = 16

/**
 * One pod's engine hashes (vLLM's, taken modulo 2^64 as the decoder gives them): each maps
 * to a block-key entry id and counts how many times it is stored (vLLM does not de-duplicate
 * identical blocks). Records are kept in first-stored order, a doubly linked list through
 * the record arrays, so the oldest can be evicted in O(1). Typed arrays throughout: a
 * Map<bigint, …> was the largest cost of applying events.
 */
export class EngineHashTable {
  private hashHigh: Uint32Array
  private hashLow: Uint32Array
  private entries: Int32Array
  private stores: Int32Array
  private prev: Int32Array
  private next: Int32Array
  private freeIds: Int32Array
  private freeCount: number
  private readonly index: PairIndex
  private head = -1
  private tail = -1
  private count = 0

  constructor() {
    const capacity = initialRecords
    this.hashHigh = new Uint32Array(capacity)
    this.hashLow = new Uint32Array(capacity)
    this.entries = new Int32Array(capacity)
    this.stores = new Int32Array(capacity)
    this.prev = new Int32Array(capacity)
    this.next = new Int32Array(capacity)
    this.freeIds = new Int32Array(capacity)
    this.freeCount = capacity
    for (let i = 0; i < capacity; i++) this.freeIds[i] = capacity - 1 - i
    this.index = new PairIndex(2 * capacity)
  }

  get size(): number {
    return this.count
  }

  /** The oldest record (first stored), or -1. */
  get oldest(): number {
    return this.head
  }

  /** The record of a hash, or -1 (also for anything that is not a bigint). */
  find(hash: bigint): number {
    if (typeof hash !== 'bigint') return -1
    scratch.setBigUint64(0, hash)
    return this.index.find(scratch.getUint32(0), scratch.getUint32(4))
  }

  entryOf(record: number): number {
    return this.entries[record] as number
  }

  storesOf(record: number): number {
    return this.stores[record] as number
  }

  /** Adds a hash known to be absent, stored once, as the newest record. */
  insert(hash: bigint, entry: number): number {
    if (this.freeCount === 0) this.grow()
    const record = this.freeIds[--this.freeCount] as number
    scratch.setBigUint64(0, hash)
    const high = scratch.getUint32(0)
    const low = scratch.getUint32(4)
    this.hashHigh[record] = high
    this.hashLow[record] = low
    this.entries[record] = entry
    this.stores[record] = 1
    this.prev[record] = this.tail
    this.next[record] = -1
    if (this.tail === -1) this.head = record
    else this.next[this.tail] = record
    this.tail = record
    this.index.insert(high, low, record)
    this.count++
    return record
  }

  /** Points a record at another entry, stored once; its place in the order is kept. */
  setEntry(record: number, entry: number): void {
    this.entries[record] = entry
    this.stores[record] = 1
  }

  addStore(record: number): void {
    this.stores[record] = (this.stores[record] as number) + 1
  }

  /** One store fewer; the record is deleted with its last one. Returns the stores left. */
  removeStore(record: number): number {
    const left = (this.stores[record] as number) - 1
    if (left === 0) this.delete(record)
    else this.stores[record] = left
    return left
  }

  delete(record: number): void {
    const before = this.prev[record] as number
    const after = this.next[record] as number
    if (before === -1) this.head = after
    else this.next[before] = after
    if (after === -1) this.tail = before
    else this.prev[after] = before
    this.index.remove(this.hashHigh[record] as number, this.hashLow[record] as number)
    this.freeIds[this.freeCount++] = record
    this.count--
  }

  /** Every record's entry, oldest first. */
  forEachEntry(visit: (entry: number) => void): void {
    for (let record = this.head; record !== -1; record = this.next[record] as number) {
      visit(this.entries[record] as number)
    }
  }

  clear(): void {
    const capacity = this.hashHigh.length
    for (let i = 0; i < capacity; i++) this.freeIds[i] = capacity - 1 - i
    this.freeCount = capacity
    this.index.clear()
    this.head = -1
    this.tail = -1
    this.count = 0
  }

  private grow(): void {
    const old = this.hashHigh.length
    const capacity = 2 * old
    this.hashHigh = widen(new Uint32Array(capacity), this.hashHigh)
    this.hashLow = widen(new Uint32Array(capacity), this.hashLow)
    this.entries = widen(new Int32Array(capacity), this.entries)
    this.stores = widen(new Int32Array(capacity), this.stores)
    this.prev = widen(new Int32Array(capacity), this.prev)
    this.next = widen(new Int32Array(capacity), this.next)
    this.freeIds = new Int32Array(capacity)
    for (let i = 0; i < old; i++) this.freeIds[i] = capacity - 1 - i
    this.freeCount = old
    this.index.resize(2 * capacity)
  }
}

function widen<T extends Uint32Array | Int32Array>(target: T, source: T): T {
  target.set(source)
  return target
}
