/**
 * An open-addressing hash index from a 64-bit key, as two uint32 words, to a record id
 * (records live in their owner's arrays, so their ids stay put). Linear probing over typed
 * arrays: a probe compares two words and allocates nothing, where a Map<bigint, …> costs
 * ~150–250 ns per operation at a few hundred thousand keys. The key words sit next to the
 * id, so a probe touches one cache line; deletion shifts later slots back (no tombstones,
 * so probe lengths do not degrade under churn). The owner keeps the load at most one half.
 */
export class PairIndex {
  private mask: number
  /** Slot i is words [4i, 4i + 3): high, low, id + 1 (0 = empty), unused (alignment). */
  private slots: Uint32Array
  private readonly seed: number

  /** `slots` is a power of two; `seed` makes positions unpredictable to crafted input. */
  constructor(slots: number, seed = 0) {
    this.seed = seed | 0
    this.mask = slots - 1
    this.slots = new Uint32Array(4 * slots)
  }

  get slotCount(): number {
    return this.mask + 1
  }

  private home(high: number, low: number): number {
    let h = Math.imul(low ^ this.seed, 0x85ebca6b) ^ high
    h ^= h >>> 15
    h = Math.imul(h, 0xc2b2ae35)
    return (h ^ (h >>> 13)) & this.mask
  }

  /** The record id of a key, or -1. */
  find(high: number, low: number): number {
    const slots = this.slots
    const mask = this.mask
    let i = this.home(high, low)
    for (;;) {
      const at = 4 * i
      const id = slots[at + 2] as number
      if (id === 0) return -1
      if (slots[at + 1] === low && slots[at] === high) return id - 1
      i = (i + 1) & mask
    }
  }

  /** Adds a key known to be absent. */
  insert(high: number, low: number, id: number): void {
    const slots = this.slots
    let i = this.home(high, low)
    while (slots[4 * i + 2] !== 0) i = (i + 1) & this.mask
    slots[4 * i] = high
    slots[4 * i + 1] = low
    slots[4 * i + 2] = id + 1
  }

  /** Removes a key (no-op when absent): later slots of its probe run move into the hole. */
  remove(high: number, low: number): void {
    const slots = this.slots
    const mask = this.mask
    let hole = this.home(high, low)
    for (;;) {
      if (slots[4 * hole + 2] === 0) return
      if (slots[4 * hole + 1] === low && slots[4 * hole] === high) break
      hole = (hole + 1) & mask
    }
    let next = hole
    for (;;) {
      next = (next + 1) & mask
      const id = slots[4 * next + 2] as number
      if (id === 0) break
      const home = this.home(slots[4 * next] as number, slots[4 * next + 1] as number)
      // The entry at `next` may fill the hole unless its home lies cyclically in (hole, next].
      const reachable = hole <= next ? home <= hole || home > next : home <= hole && home > next
      if (!reachable) continue
      slots[4 * hole] = slots[4 * next] as number
      slots[4 * hole + 1] = slots[4 * next + 1] as number
      slots[4 * hole + 2] = id
      hole = next
    }
    slots[4 * hole + 2] = 0
  }

  /** Re-inserts every key into `count` slots (a power of two). */
  resize(count: number): void {
    const old = this.slots
    this.mask = count - 1
    this.slots = new Uint32Array(4 * count)
    for (let at = 0; at < old.length; at += 4) {
      const id = old[at + 2] as number
      if (id !== 0) this.insert(old[at] as number, old[at + 1] as number, id - 1)
    }
  }

  clear(): void {
    this.slots.fill(0)
  }
}
