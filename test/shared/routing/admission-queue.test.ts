import { describe, expect, it } from 'vitest'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { AdmissionQueue, type HeldRequest } from '../../../shared/routing/admission-queue.ts'
import { routerSettings } from '../../../shared/routing/pool-options.ts'
import { PoolRouter, type RouteResult } from '../../../shared/routing/pool-router.ts'
import { createKinferenceStrategy } from '../../../shared/routing/strategies/create-kinference-strategy.ts'
import { heldLookup, onePodSpec } from '../../support/one-pod-pool.ts'

const spec = onePodSpec

/**
 * One pod whose KV cache holds 4,096 tokens: a second 3,000-token prompt cannot start. The
 * queue routes with the router (which dispatches, and holds nothing itself here).
 */
function setup(options: { enabled?: boolean; maxHoldMs?: number; scanLimit?: number } = {}) {
  const admission = {
    enabled: options.enabled ?? true,
    maxHoldMs: options.maxHoldMs ?? 30_000,
    maxHeld: 100,
    scanLimit: options.scanLimit ?? 16,
    stepBudget: 2048,
  }
  const router = new PoolRouter({
    name: 'p',
    spec,
    index: createMemoryKvIndex(),
    random: () => 0.5,
    indexNowMs: () => 0,
    onError: (message) => {
      throw new Error(message)
    },
    settings: {
      ...routerSettings(spec),
      strategy: createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 }),
      stepBudget: 2048,
      prior: { overheadMs: 40, msPerToken: 0.15 },
      onlineCalibration: false,
      forgettingFactor: 0.98,
      driftTolerance: 0.25,
      metricsStalenessMs: 2_000,
      unhealthyCooldownMs: 5_000,
      kvCapacityTokens: 4_096,
      stepCost: { decodeStepMs: 40, msPerContextToken: 2e-4 },
      admission: { ...admission, enabled: false },
    },
  })
  router.addPod('a', 0)
  router.setIndexReady('a', true)
  const queue = new AdmissionQueue<string>(router, admission)
  /** Sends the request to the pod `route` chose, as the router does once the queue lets it go. */
  const dispatch = (id: string, route: RouteResult | null, nowMs: number) =>
    router.dispatchNow(lookup(id), nowMs, { route: route ?? undefined })
  return { router, queue, dispatch }
}

const lookup = heldLookup
const held = (id: string, sinceMs = 0, maxHoldMs = 30_000): HeldRequest<string> => ({
  lookup: lookup(id),
  sinceMs,
  payload: id,
  tenant: '',
  band: 0,
  deadlineMs: sinceMs + maxHoldMs,
  expires: false,
  ownDeadline: false,
})

describe('AdmissionQueue', () => {
  it('routes at once what its pod can start, holds what it cannot, and releases it when the pod frees up', () => {
    const { router, queue, dispatch } = setup()
    const first = queue.offer(held('r1'), 0)
    expect(first?.decision.pod).toBe('a')
    dispatch('r1', first, 0)
    expect(queue.offer(held('r2'), 1)).toBeNull()
    expect(queue.size).toBe(1)
    const released: string[] = []
    queue.release(2, (entry) => released.push(entry.payload))
    expect(released).toEqual([]) // r1 still holds the memory
    router.firstToken('r1', 3)
    router.finished('r1', 4, 0)
    queue.release(5, (entry, route) => {
      released.push(entry.payload)
      expect(route.decision.pod).toBe('a')
    })
    expect(released).toEqual(['r2'])
    expect(queue.size).toBe(0)
  })

  it('holds nothing when off, and lets a request go once held for maxHoldMs', () => {
    const off = setup({ enabled: false })
    off.dispatch('r1', off.queue.offer(held('r1'), 0), 0)
    expect(off.queue.offer(held('r2'), 1)).not.toBeNull()

    const { queue, dispatch } = setup({ maxHoldMs: 100 })
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    expect(queue.offer(held('r2', 0, 100), 0)).toBeNull()
    const released: string[] = []
    queue.release(50, (entry) => released.push(entry.payload))
    expect(released).toEqual([])
    queue.release(100, (entry) => released.push(entry.payload))
    expect(released).toEqual(['r2'])
  })

  it('takes out a request whose client left, and hands the rest back on drain', () => {
    const { queue, dispatch } = setup()
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    const gone = held('r2')
    queue.offer(gone, 1)
    queue.offer(held('r3'), 1)
    expect(queue.remove(gone)).toBe(true)
    expect(queue.remove(gone)).toBe(false)
    expect(queue.size).toBe(1)
    expect(queue.drain().map((entry) => entry.payload)).toEqual(['r3'])
    expect(queue.size).toBe(0)
  })

  it('routes held requests token-fair: a light tenant goes before a heavy one that queued first', () => {
    const { router, queue, dispatch } = setup()
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    // The heavy tenant was served 10 requests' worth before; the light one nothing.
    for (let i = 0; i < 10; i++) queue.dispatched('heavy', 3_000, 16, i)
    const ticket = (id: string, tenant: string, at: number) =>
      queue.ticket(lookup(id, tenant), id, at)
    expect(queue.offer(ticket('h1', 'heavy', 1), 1)).toBeNull()
    expect(queue.offer(ticket('h2', 'heavy', 2), 2)).toBeNull()
    expect(queue.offer(ticket('l1', 'light', 3), 3)).toBeNull()
    const order: string[] = []
    router.firstToken('r1', 4)
    router.finished('r1', 5, 0)
    // One at a time: each release lets one go (the pod holds 4,096 tokens).
    for (let t = 6; order.length < 3 && t < 20; t++) {
      queue.release(t, (entry, route) => {
        order.push(entry.payload)
        dispatch(entry.payload, route, t)
      })
      const last = order.at(-1)
      if (last) {
        router.firstToken(last, t)
        router.finished(last, t, 0)
      }
    }
    expect(order[0]).toBe('l1')
    expect(order.slice(1)).toEqual(['h1', 'h2'])
  })

  it('lets a request with an objective expire unrouted at its deadline, even without late binding', () => {
    const { queue, dispatch } = setup({ enabled: false })
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    const entry = queue.ticket(lookup('r2'), 'r2', 0, { deadlineMs: 500 })
    expect(queue.offer(entry, 0)).toBeNull()
    const expired: string[] = []
    const released: string[] = []
    const expire = (e: HeldRequest<string>) => expired.push(e.payload) > 0
    queue.release(499, (e) => released.push(e.payload), expire)
    expect(expired).toEqual([])
    queue.release(500, (e) => released.push(e.payload), expire)
    expect(expired).toEqual(['r2'])
    expect(released).toEqual([])
    expect(queue.size).toBe(0)
  })

  it('predicts the wait of a new request from the held ones ranked before it', () => {
    const { queue, dispatch } = setup()
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    queue.dispatched('x', 0, 0, 100)
    queue.dispatched('x', 0, 0, 300) // one dispatch every 200 ms
    expect(queue.waitMs('a', 0)).toBe(0)
    queue.offer(queue.ticket(lookup('a1', 'a'), 'a1', 301), 301)
    queue.offer(queue.ticket(lookup('a2', 'a'), 'a2', 302), 302)
    // Its own tenant's two, then itself.
    expect(queue.waitMs('a', 0)).toBeCloseTo(600, 6)
    // A higher band waits for nobody but itself.
    expect(queue.waitMs('a', 1)).toBeCloseTo(200, 6)
  })

  it('sends a request whose terms do not expire to its best pod at its deadline, late binding or not', () => {
    const { queue, dispatch } = setup({ enabled: false })
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    const entry = queue.ticket(lookup('r2'), 'r2', 0, { deadlineMs: 500, expires: false })
    expect(queue.offer(entry, 0)).toBeNull()
    const expired: string[] = []
    const released: string[] = []
    queue.release(
      500,
      (e) => released.push(e.payload),
      (e) => expired.push(e.payload) > 0,
    )
    expect(released).toEqual(['r2'])
    expect(expired).toEqual([])
  })
})
