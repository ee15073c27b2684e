export interface LruCacheOptions<K, V> {
  /** At most this many entries. */
  maxEntries: number
  /** At most this total weight (say, characters); entries heavier than this are not kept. */
  maxWeight?: number
  /** The weight of one entry; 1 when not given. */
  weigh?: (key: K, value: V) => number
}

export interface LruCacheStats {
  entries: number
  weight: number
  hits: number
  misses: number
}

/**
 * A map that forgets its least recently used entries past a count and a total weight.
 * Relies on Map iterating in insertion order: a hit is moved to the end, eviction takes
 * from the front.
 */
export class LruCache<K, V> {
  readonly #entries = new Map<K, { value: V; weight: number }>()
  readonly #maxEntries: number
  readonly #maxWeight: number
  readonly #weigh: (key: K, value: V) => number
  #weight = 0
  #hits = 0
  #misses = 0

  constructor(options: LruCacheOptions<K, V>) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 0) {
      throw new RangeError(`maxEntries must be a non-negative integer, got ${options.maxEntries}`)
    }
    this.#maxEntries = options.maxEntries
    this.#maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY
    this.#weigh = options.weigh ?? (() => 1)
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) {
      this.#misses++
      return undefined
    }
    this.#hits++
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    return entry.value
  }

  set(key: K, value: V): void {
    this.delete(key)
    const weight = this.#weigh(key, value)
    if (this.#maxEntries === 0 || weight > this.#maxWeight) return
    this.#entries.set(key, { value, weight })
    this.#weight += weight
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#weight <= this.#maxWeight) break
      this.#entries.delete(oldest)
      this.#weight -= entry.weight
    }
  }

  delete(key: K): boolean {
    const entry = this.#entries.get(key)
    if (entry === undefined) return false
    this.#entries.delete(key)
    this.#weight -= entry.weight
    return true
  }

  clear(): void {
    this.#entries.clear()
    this.#weight = 0
  }

  stats(): LruCacheStats {
    return {
      entries: this.#entries.size,
      weight: this.#weight,
      hits: this.#hits,
      misses: this.#misses,
    }
  }
}
