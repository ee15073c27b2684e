import { KinfError } from '../errors/kinf-error.ts'

/**
 * Speculative entries in the order they were written, for lazy purging: a ring of
 * (entry id, pod slot, expiry). Speculative TTLs are nearly constant, so write order is
 * nearly expiry order and the head is the next to expire; an item whose entry was since
 * extended, removed or replaced is recognised as stale by its caller and skipped. The ring
 * has a fixed maximum: when full, the oldest item is handed back to be evicted, which is
 * what bounds speculative state under any input.
 */
/** Items allocated up front (at most maxItems); the ring doubles from there. */
const initialItems = 256

export class ExpiryQueue {
  private ids: Int32Array
  private slots: Int32Array
  private expiries: Float64Array
  private head = 0
  private count = 0
  readonly maxItems: number

  /** `maxItems` is MemoryKvIndexOptions' maxSpeculative, which owns its default. */
  constructor(maxItems: number) {
    this.maxItems = maxItems
    const capacity = Math.min(maxItems, initialItems)
    this.ids = new Int32Array(capacity)
    this.slots = new Int32Array(capacity)
    this.expiries = new Float64Array(capacity)
  }

  get size(): number {
    return this.count
  }

  get full(): boolean {
    return this.count === this.maxItems
  }

  /** Adds an item; the caller makes room first (`full`: shift the oldest out). */
  push(id: number, slot: number, expiry: number): void {
    if (this.count === this.maxItems) {
      throw new KinfError('internal', 'expiry queue: push onto a full queue')
    }
    if (this.count === this.ids.length) this.grow()
    const at = (this.head + this.count) % this.ids.length
    this.ids[at] = id
    this.slots[at] = slot
    this.expiries[at] = expiry
    this.count++
  }

  /** The oldest item's expiry (Infinity when empty). */
  peekExpiry(): number {
    return this.count === 0 ? Number.POSITIVE_INFINITY : (this.expiries[this.head] as number)
  }

  /** Removes the oldest item and passes it to `visit`. */
  shift(visit: (id: number, slot: number, expiry: number) => void): void {
    if (this.count === 0) return
    const at = this.head
    this.head = (this.head + 1) % this.ids.length
    this.count--
    visit(this.ids[at] as number, this.slots[at] as number, this.expiries[at] as number)
  }

  clear(): void {
    this.head = 0
    this.count = 0
  }

  private grow(): void {
    const capacity = Math.min(this.maxItems, 2 * this.ids.length)
    const ids = new Int32Array(capacity)
    const slots = new Int32Array(capacity)
    const expiries = new Float64Array(capacity)
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) % this.ids.length
      ids[i] = this.ids[at] as number
      slots[i] = this.slots[at] as number
      expiries[i] = this.expiries[at] as number
    }
    this.ids = ids
    this.slots = slots
    this.expiries = expiries
    this.head = 0
  }
}
