import { describe, expect, it } from 'vitest'
import { type FairEntry, FairQueue } from '../../../shared/routing/fair-queue.ts'

interface Job extends FairEntry {
  id: string
}

let clock = 0
/** A job of `tenant`, queued one ms after the previous one. */
const job = (id: string, tenant: string, band = 0, deadlineMs: number | null = null): Job => ({
  id,
  tenant,
  band,
  sinceMs: clock++,
  deadlineMs,
})

const ids = (jobs: readonly Job[]) => jobs.map((j) => j.id)

/** A release pass: offers each job in service order; `dispatch` says whether it goes. */
function release(queue: FairQueue<Job>, dispatch: (j: Job) => boolean, tokens = 100): string[] {
  const sent: string[] = []
  for (const j of queue.serviceOrder()) {
    if (!dispatch(j)) continue
    queue.remove(j)
    queue.charge(j.tenant, tokens, 0)
    sent.push(j.id)
  }
  return sent
}

describe('FairQueue', () => {
  it('offers every entry of a higher band before any of a lower one, whatever the counters', () => {
    const queue = new FairQueue<Job>()
    queue.charge('heavy', 1_000_000, 0)
    for (const j of [job('l1', 'light', 0), job('h1', 'heavy', 2), job('m1', 'light', 1)]) {
      queue.push(j)
    }
    queue.push(job('h2', 'heavy', 2))
    queue.push(job('l2', 'other', 0))
    expect(ids(queue.ordered())).toEqual(['h1', 'h2', 'm1', 'l1', 'l2'])
  })

  it('within a band, puts the tenant served less first; FIFO within a tenant', () => {
    const queue = new FairQueue<Job>()
    for (const j of [job('a1', 'a'), job('a2', 'a'), job('b1', 'b'), job('b2', 'b')]) {
      queue.push(j)
    }
    expect(ids(queue.ordered())).toEqual(['a1', 'a2', 'b1', 'b2'])
    // Both backlogged, a is served ten times as much (requests of its not held, say).
    queue.charge('a', 10_000, 0)
    queue.charge('b', 1_000, 0)
    expect(ids(queue.ordered())).toEqual(['b1', 'b2', 'a1', 'a2'])
    expect(queue.counter('a')).toBe(10_000)
  })

  it('breaks a tie between tenants by the earliest queued entry', () => {
    const queue = new FairQueue<Job>()
    const late = { ...job('late', 'x'), sinceMs: 100 }
    const early = { ...job('early', 'y'), sinceMs: 50 }
    queue.push(late)
    queue.push(early)
    expect(ids(queue.ordered())).toEqual(['early', 'late'])
  })

  it('weighs an output token as twice an input token by default, as VTC does', () => {
    const queue = new FairQueue<Job>()
    queue.charge('a', 100, 50)
    queue.charge('a', -1_000, Number.NaN)
    expect(queue.counter('a')).toBe(200)
    const custom = new FairQueue<Job>({ inputWeight: 0.5, outputWeight: 4 })
    custom.charge('a', 100, 50)
    expect(custom.counter('a')).toBe(250)
  })

  it('follows the charges made during a pass: equal charges make tenants alternate', () => {
    const queue = new FairQueue<Job>()
    for (const t of ['a', 'a', 'a', 'b', 'b', 'b']) queue.push(job(`${t}${clock}`, t))
    const before = ids(queue.ordered())
    expect(before.map((id) => id[0])).toEqual(['a', 'a', 'a', 'b', 'b', 'b'])
    const sent = release(queue, () => true)
    expect(sent.map((id) => id[0])).toEqual(['a', 'b', 'a', 'b', 'a', 'b'])
    expect(queue.size).toBe(0)
  })

  it('offers the entries behind one that stays held, its tenant’s next one first', () => {
    const queue = new FairQueue<Job>()
    for (const j of [job('a1', 'a'), job('a2', 'a'), job('b1', 'b'), job('c1', 'c', 1)]) {
      queue.push(j)
    }
    const offered: string[] = []
    const sent = release(queue, (j) => {
      offered.push(j.id)
      return j.id !== 'c1' && j.id !== 'a1'
    })
    // c1 (higher band) cannot start, yet the lower band is served: work-conserving. a and
    // b tie on their counters; b, with fewer queued, goes first.
    expect(offered).toEqual(['c1', 'b1', 'a1', 'a2'])
    expect(sent).toEqual(['b1', 'a2'])
    expect(ids(queue.ordered())).toEqual(['c1', 'a1'])
  })

  it('serves a lone backlogged tenant whatever its counter', () => {
    const queue = new FairQueue<Job>()
    queue.charge('greedy', 1e12, 0)
    queue.charge('idle', 1, 0)
    queue.push(job('g1', 'greedy'))
    expect(queue.next()?.id).toBe('g1')
    expect(release(queue, () => true)).toEqual(['g1'])
  })

  it('lifts a tenant back from idle to the backlogged minimum: no banked credit', () => {
    const queue = new FairQueue<Job>()
    queue.push(job('a0', 'a'))
    release(queue, () => true)
    // b is served 1M tokens while a has nothing queued.
    for (let i = 0; i < 10_000; i++) queue.push(job(`b${i}`, 'b'))
    for (let i = 0; i < 9_990; i++) {
      const next = queue.next()
      if (next) queue.remove(next)
      queue.charge('b', 100, 0)
    }
    expect(queue.counter('b')).toBeGreaterThan(999_000)
    for (let i = 0; i < 10; i++) queue.push(job(`a${i + 1}`, 'a'))
    expect(queue.counter('a')).toBe(queue.counter('b'))
    const first = release(queue, () => true).slice(0, 10)
    expect(first.filter((id) => id.startsWith('a'))).toHaveLength(5)
  })

  it('lifts into an empty band to the tenant served last, held or not', () => {
    const queue = new FairQueue<Job>()
    queue.push(job('a1', 'a'))
    release(queue, () => true)
    queue.charge('b', 1_000_000, 0)
    queue.push(job('a2', 'a'))
    expect(queue.counter('a')).toBe(1_000_000)
    queue.push(job('c1', 'c', 1))
    expect(queue.counter('c')).toBe(1_000_000)
    // A lift never lowers a counter.
    queue.charge('d', 5_000_000, 0)
    queue.push(job('d1', 'd'))
    expect(queue.counter('d')).toBe(5_000_000)
  })

  it('expires exactly the entries whose deadline has come, oldest first', () => {
    const queue = new FairQueue<Job>()
    const jobs = [job('x', 'a', 0, 20), job('y', 'b', 1, 10), job('z', 'a', 0, null)]
    for (const j of [...jobs, job('w', 'c', 0, 21)]) queue.push(j)
    expect(queue.expire(9)).toEqual([])
    expect(ids(queue.expire(20))).toEqual(['x', 'y'])
    expect(queue.size).toBe(2)
    expect(ids(queue.ordered())).toEqual(['z', 'w'])
    expect(ids(queue.expire(1e12))).toEqual(['w'])
  })

  it('removes one entry, or drains them all in service order', () => {
    const queue = new FairQueue<Job>()
    const a1 = job('a1', 'a')
    for (const j of [a1, job('a2', 'a'), job('b1', 'b', 1)]) queue.push(j)
    expect(queue.remove(a1)).toBe(true)
    expect(queue.remove(a1)).toBe(false)
    expect(queue.remove(job('n', 'nobody'))).toBe(false)
    expect(queue.size).toBe(2)
    expect(ids(queue.drain())).toEqual(['b1', 'a2'])
    expect(queue.size).toBe(0)
    expect(queue.next()).toBeUndefined()
  })

  it('remembers a bounded number of tenants under 100k distinct ids, the heaviest kept', () => {
    const queue = new FairQueue<Job>({ maxTenants: 1_000 })
    const waiting = job('w', 'waiting')
    queue.push(waiting)
    queue.charge('heavy', 1e9, 0)
    for (let i = 0; i < 100_000; i++) {
      const j = job(`t${i}`, `tenant-${i}`)
      queue.push(j)
      queue.remove(j)
      queue.charge(j.tenant, 1 + (i % 7), 0)
      expect(queue.tenants).toBeLessThanOrEqual(1_000)
    }
    expect(queue.counter('heavy')).toBe(1e9)
    expect(queue.tenants).toBeGreaterThan(500)
    expect(queue.next()).toBe(waiting)
  })

  it('never forgets a backlogged tenant, even one just lifted', () => {
    const queue = new FairQueue<Job>({ maxTenants: 4 })
    queue.push(job('a1', 'a'))
    queue.charge('a', 100, 0)
    for (const [tenant, tokens] of [
      ['x1', 500],
      ['x2', 600],
      ['x3', 700],
    ] as const) {
      queue.charge(tenant, tokens, 0)
    }
    queue.push(job('b1', 'b'))
    expect(queue.counter('b')).toBe(100)
    expect(queue.counter('a')).toBe(100)
    expect(queue.tenants).toBeLessThanOrEqual(4)
  })

  it('gives a tenant under its fair share all it asks, and the rest to the other', () => {
    // a queues 2 jobs a tick, b one every 5 ticks (a tenth of a's rate); the server takes
    // one job a tick, so demand is 2.2 times capacity. Jobs leave after 40 ticks unserved.
    const queue = new FairQueue<Job>()
    const served = { a: 0, b: 0 }
    const arrived = { a: 0, b: 0 }
    let worstWaitB = 0
    const ticks = 5_000
    for (let t = 0; t < ticks; t++) {
      const arrivals = t % 5 === 0 ? ['a', 'a', 'b'] : ['a', 'a']
      for (const tenant of arrivals) {
        queue.push({ id: `${tenant}${t}`, tenant, band: 0, sinceMs: t, deadlineMs: t + 40 })
        arrived[tenant as 'a' | 'b']++
      }
      queue.expire(t)
      const next = queue.next()
      if (!next) continue
      queue.remove(next)
      queue.charge(next.tenant, 60, 20)
      served[next.tenant as 'a' | 'b']++
      if (next.tenant === 'b') worstWaitB = Math.max(worstWaitB, t - next.sinceMs)
    }
    const tokensPerTick = (n: number) => (n * 100) / ticks
    expect(served.b).toBeGreaterThanOrEqual(arrived.b - 1)
    expect(worstWaitB).toBeLessThanOrEqual(1)
    expect(tokensPerTick(served.b)).toBeCloseTo(20, 0)
    expect(tokensPerTick(served.a)).toBeCloseTo(80, 0)
    expect(served.a + served.b).toBe(ticks)
  })
})
