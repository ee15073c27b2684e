import { PairIndex } from './pair-index.ts'

/**
 * The in-memory index's one big structure: our 64-bit block keys (in a PairIndex), each
 * with two bitsets over pod slots (stored, speculative). Entries have stable ids, which
 * the per-pod engine-hash tables point at; an entry is freed when its last bit clears.
 */
export class BlockKeyTable {
  /** 32-bit words per bitset: pod slots / 32, grown when a slot beyond them is needed. */
  words = 1
  /** Key words of each entry id. */
  keyHigh: Uint32Array
  keyLow: Uint32Array
  /** Bit `slot` of entry `id`: word `id * words + (slot >>> 5)`. */
  stored: Uint32Array
  speculative: Uint32Array
  /** Set bits of the entry over both bitsets: the entry is freed when none is left. */
  private holders: Int32Array
  private freeIds: Int32Array
  private freeCount: number
  private readonly index: PairIndex
  private used = 0

  /**
   * `seed` makes probe positions unpredictable, against crafted prompts that collide. Both
   * are MemoryKvIndexOptions (initialBlocks, tableSeed), which own their defaults.
   */
  constructor(initialEntries: number, seed: number) {
    const capacity = Math.max(16, 2 ** Math.ceil(Math.log2(initialEntries)))
    this.keyHigh = new Uint32Array(capacity)
    this.keyLow = new Uint32Array(capacity)
    this.stored = new Uint32Array(capacity)
    this.speculative = new Uint32Array(capacity)
    this.holders = new Int32Array(capacity)
    this.freeIds = new Int32Array(capacity)
    this.freeCount = capacity
    for (let i = 0; i < capacity; i++) this.freeIds[i] = capacity - 1 - i
    this.index = new PairIndex(2 * capacity, seed)
  }

  /** Entries in use. */
  get size(): number {
    return this.used
  }

  /** The entry id of a key, or -1. */
  find(high: number, low: number): number {
    return this.index.find(high, low)
  }

  /**
   * The entry id of a key, inserting it when absent. A new entry must get a bit set right
   * away: entries are freed when their last bit is cleared, never otherwise.
   */
  acquire(high: number, low: number): number {
    const found = this.index.find(high, low)
    if (found !== -1) return found
    if (this.freeCount === 0) this.grow()
    const id = this.freeIds[--this.freeCount] as number
    this.keyHigh[id] = high
    this.keyLow[id] = low
    this.index.insert(high, low, id)
    this.used++
    return id
  }

  /** Sets a pod's bit; true when it was not set. */
  setBit(bits: Uint32Array, id: number, slot: number): boolean {
    const word = id * this.words + (slot >>> 5)
    const bit = 1 << (slot & 31)
    const value = bits[word] as number
    if ((value & bit) !== 0) return false
    bits[word] = value | bit
    this.holders[id] = (this.holders[id] as number) + 1
    return true
  }

  hasBit(bits: Uint32Array, id: number, slot: number): boolean {
    return ((bits[id * this.words + (slot >>> 5)] as number) & (1 << (slot & 31))) !== 0
  }

  /** Clears a pod's bit; frees the entry when no pod holds it any more. True when it was set. */
  clearBit(bits: Uint32Array, id: number, slot: number): boolean {
    const word = id * this.words + (slot >>> 5)
    const bit = 1 << (slot & 31)
    const value = bits[word] as number
    if ((value & bit) === 0) return false
    bits[word] = value & ~bit
    const left = (this.holders[id] as number) - 1
    this.holders[id] = left
    if (left === 0) this.release(id)
    return true
  }

  /** Makes room for pod slot `slot` in every bitset. */
  ensureSlot(slot: number): void {
    if (slot < this.words * 32) return
    const words = Math.max(2 * this.words, (slot >>> 5) + 1)
    const capacity = this.keyHigh.length
    this.stored = widen(this.stored, capacity, this.words, words)
    this.speculative = widen(this.speculative, capacity, this.words, words)
    this.words = words
  }

  private release(id: number): void {
    this.index.remove(this.keyHigh[id] as number, this.keyLow[id] as number)
    this.freeIds[this.freeCount++] = id
    this.used--
  }

  /** Doubles the entry capacity (and the hash slots, keeping the load at most one half). */
  private grow(): void {
    const old = this.keyHigh.length
    const capacity = 2 * old
    this.keyHigh = copyInto(new Uint32Array(capacity), this.keyHigh)
    this.keyLow = copyInto(new Uint32Array(capacity), this.keyLow)
    this.stored = copyInto(new Uint32Array(capacity * this.words), this.stored)
    this.speculative = copyInto(new Uint32Array(capacity * this.words), this.speculative)
    this.holders = copyInto(new Int32Array(capacity), this.holders)
    this.freeIds = new Int32Array(capacity)
    for (let i = 0; i < old; i++) this.freeIds[i] = capacity - 1 - i
    this.freeCount = old
    this.index.resize(2 * capacity)
  }
}

function copyInto<T extends Uint32Array | Int32Array>(target: T, source: T): T {
  target.set(source)
  return target
}

function widen(bits: Uint32Array, capacity: number, from: number, to: number): Uint32Array {
  const out = new Uint32Array(capacity * to)
  for (let id = 0; id < capacity; id++) {
    for (let w = 0; w < from; w++) out[id * to + w] = bits[id * from + w] as number
  }
  return out
}
