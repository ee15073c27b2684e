/** What the fair queue needs to know of a queued request. */
export interface FairEntry {
  /** Who is charged for it: the tenant. */
  readonly tenant: string
  /** Priority band: every entry of a higher band is offered before any of a lower one. */
  readonly band: number
  /** When it was queued (ms, the caller's clock): breaks ties between tenants. */
  readonly sinceMs: number
  /** The time from which it must leave the queue unserved (`expire`); null: never. */
  readonly deadlineMs: number | null
}

/** How a FairQueue charges and remembers (validated by whoever owns the queue). */
export interface FairQueueOptions {
  /** Counter units per uncached input token (the Virtual Token Counter uses 1). */
  inputWeight?: number
  /** Counter units per output token (VTC uses 2: a decode token costs more than a prefill one). */
  outputWeight?: number
  /** Most tenants whose counters are remembered; well above the most entries ever queued. */
  maxTenants?: number
}

type Queued<T> = { entry: T; seq: number }

/**
 * Held requests in the order they should be offered: by priority band, then, within a
 * band, the tenant served the fewest weighted tokens first (a Virtual Token Counter, as
 * issue 26's token-fair tenants ask; on a tie, the tenant with fewer queued), then FIFO
 * within a tenant. Counters are per tenant
 * and shared by all bands. A tenant that had nothing queued in a band is lifted, as it
 * queues there, to the lowest counter of the tenants still queued in that band (or, if
 * none is, to that of the tenant served last): being idle banks no credit, so a tenant that
 * returns competes from where the others are, not from where it left. (As counters are
 * shared, that lift also counts in the tenant's other bands: it only ever costs it.)
 * Nothing here decides whether an entry is served: the queue only orders, so whatever
 * is queued is offered (work-conserving), whatever its tenant's counter.
 */
export class FairQueue<T extends FairEntry> {
  private readonly inputWeight: number
  private readonly outputWeight: number
  private readonly maxTenants: number
  private readonly counters = new Map<string, number>()
  /** band → tenant → its entries, oldest first; empty ones are deleted. */
  private readonly bands = new Map<number, Map<string, Queued<T>[]>>()
  /** Entries queued per tenant, all bands: a tenant here is backlogged, never forgotten. */
  private readonly queued = new Map<string, number>()
  /**
   * VTC lifts into an empty queue to the counter of the last client to leave it. Most
   * requests are dispatched without being held: each is a client through the queue at
   * once, so a charge counts as leaving it too.
   */
  private lastServed: string | null = null
  private seq = 0
  private count = 0

  constructor(options: FairQueueOptions = {}) {
    this.inputWeight = options.inputWeight ?? 1
    this.outputWeight = options.outputWeight ?? 2
    this.maxTenants = options.maxTenants ?? 10_000
  }

  /** Entries queued now. */
  get size(): number {
    return this.count
  }

  /** Tenants whose counters are remembered now (at most `maxTenants`, backlogged ones aside). */
  get tenants(): number {
    return this.counters.size
  }

  push(entry: T): void {
    const band = this.bands.get(entry.band) ?? new Map<string, Queued<T>[]>()
    this.bands.set(entry.band, band)
    // Backlogged before the lift: a tenant lifted cannot be forgotten at once.
    this.queued.set(entry.tenant, (this.queued.get(entry.tenant) ?? 0) + 1)
    let queue = band.get(entry.tenant)
    if (!queue) {
      this.lift(entry.tenant, band)
      queue = []
      band.set(entry.tenant, queue)
    }
    queue.push({ entry, seq: this.seq++ })
    this.count++
  }

  remove(entry: T): boolean {
    const queue = this.bands.get(entry.band)?.get(entry.tenant) ?? []
    const at = queue.findIndex((q) => q.entry === entry)
    if (at < 0) return false
    queue.splice(at, 1)
    this.left(entry)
    return true
  }

  /** Removes and returns every entry, in service order. */
  drain(): T[] {
    const all = this.ordered()
    for (const entry of all) this.remove(entry)
    return all
  }

  /** Removes and returns, oldest first, the entries whose deadline has come (now ≥ deadline). */
  expire(nowMs: number): T[] {
    const due: Queued<T>[] = []
    for (const band of this.bands.values()) {
      for (const queue of band.values()) {
        for (const q of queue) {
          if (q.entry.deadlineMs !== null && nowMs >= q.entry.deadlineMs) due.push(q)
        }
      }
    }
    due.sort((a, b) => a.seq - b.seq)
    for (const q of due) this.remove(q.entry)
    return due.map((q) => q.entry)
  }

  /**
   * The entry to offer next, leaving out those in `skip` (offered already and still held):
   * the highest band with one; in it, the first unskipped entry of the tenant with the
   * lowest counter (ties: the one queued earliest). Reads the counters as they are now, so
   * a release that charges each dispatch as it goes sees the order those charges make.
   * O(bands log bands + tenants + skipped entries).
   */
  next(skip?: ReadonlySet<T>): T | undefined {
    const bands = [...this.bands.keys()].sort((a, b) => b - a)
    for (const band of bands) {
      let best: Queued<T> | undefined
      let bestCounter = 0
      let bestQueued = 0
      for (const [tenant, queue] of this.bands.get(band) ?? []) {
        const head = skip ? queue.find((q) => !skip.has(q.entry)) : queue[0]
        if (!head) continue
        const counter = this.counter(tenant)
        // Ties (a tenant lifted on arrival ties the lowest) go to the tenant with fewer
        // queued: a light tenant is served on arrival, a heavy one waits its turn.
        const tie = counter === bestCounter
        const fewer = tie && queue.length < bestQueued
        const same = tie && queue.length === bestQueued
        if (!best || counter < bestCounter || fewer || (same && before(head, best))) {
          best = head
          bestCounter = counter
          bestQueued = queue.length
        }
      }
      if (best) return best.entry
    }
    return undefined
  }

  /**
   * Every entry once, in service order, each chosen when the previous one has been
   * handled: the caller may dispatch, `charge` and `remove` between steps and the rest of
   * the pass follows the new counters. Entries pushed during the pass are offered too.
   */
  *serviceOrder(): Generator<T, void, undefined> {
    const offered = new Set<T>()
    for (let entry = this.next(offered); entry !== undefined; entry = this.next(offered)) {
      offered.add(entry)
      yield entry
    }
  }

  /** A snapshot of the service order if nothing were charged meanwhile. */
  ordered(): T[] {
    return [...this.serviceOrder()]
  }

  /**
   * Adds what `tenant` was served: the input tokens it made a pod compute (uncached)
   * and its output tokens, each by its weight. Negative or non-finite amounts are ignored
   * (a counter that could go down would let a tenant buy back its turn).
   */
  charge(tenant: string, inputTokens: number, outputTokens: number): void {
    const cost =
      Math.max(0, inputTokens) * this.inputWeight + Math.max(0, outputTokens) * this.outputWeight
    if (!Number.isFinite(cost) || cost === 0) return
    this.lastServed = tenant
    this.setCounter(tenant, this.counter(tenant) + cost)
  }

  /** Weighted tokens `tenant` was served (0 for a tenant not remembered). */
  counter(tenant: string): number {
    return this.counters.get(tenant) ?? 0
  }

  /** The VTC lift of a tenant that starts queueing in `band`. */
  private lift(tenant: string, band: Map<string, Queued<T>[]>): void {
    let floor = Number.POSITIVE_INFINITY
    for (const other of band.keys()) floor = Math.min(floor, this.counter(other))
    if (band.size === 0) floor = this.lastServed === null ? 0 : this.counter(this.lastServed)
    if (floor > this.counter(tenant)) this.setCounter(tenant, floor)
  }

  private left(entry: T): void {
    const band = this.bands.get(entry.band)
    if (band?.get(entry.tenant)?.length === 0) band.delete(entry.tenant)
    if (band?.size === 0) this.bands.delete(entry.band)
    const queued = (this.queued.get(entry.tenant) ?? 1) - 1
    if (queued > 0) this.queued.set(entry.tenant, queued)
    else {
      this.queued.delete(entry.tenant)
      this.lastServed = entry.tenant
    }
    this.count--
  }

  private setCounter(tenant: string, value: number): void {
    this.counters.set(tenant, value)
    if (this.counters.size > this.maxTenants) this.forget()
  }

  /**
   * Bounds the counters under any number of tenant ids. Only idle tenants are forgotten
   * (and not the one served last: its counter is the floor of an empty band), lowest
   * counter first: a tenant forgotten comes back at 0 and is lifted to the floor of its
   * band, so forgetting one at or under that floor changes nothing, and one above it gains
   * at most the difference. Down to 3/4 of the cap, so that a sort is paid once per
   * maxTenants/4 new tenants.
   */
  private forget(): void {
    const idle = [...this.counters].filter(([t]) => !this.queued.has(t) && t !== this.lastServed)
    idle.sort((a, b) => a[1] - b[1])
    const excess = this.counters.size - Math.floor((this.maxTenants * 3) / 4)
    for (const [tenant] of idle.slice(0, Math.max(0, excess))) this.counters.delete(tenant)
  }
}

/** Queued earlier: by the caller's clock, then by order of push. */
function before<T extends FairEntry>(a: Queued<T>, b: Queued<T>): boolean {
  if (a.entry.sinceMs !== b.entry.sinceMs) return a.entry.sinceMs < b.entry.sinceMs
  return a.seq < b.seq
}
