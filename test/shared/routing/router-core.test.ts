import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { RouterCore } from '../../../shared/routing/router-core.ts'
import type { RoutingRequest } from '../../../shared/routing/routing-strategy.ts'
import { createKinferenceStrategy } from '../../../shared/routing/strategies/create-kinference-strategy.ts'

function core() {
  const router = new RouterCore({
    strategy: createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 }),
    stepBudget: 2048,
    prior: { overheadMs: 44, msPerToken: 0.1445 },
    onlineCalibration: true,
    forgettingFactor: 0.98,
    driftTolerance: 0.25,
    metricsStalenessMs: 2000,
    unhealthyCooldownMs: 5000,
    kvCapacityTokens: null,
    stepCost: { decodeStepMs: 43, msPerContextToken: 2e-4 },
  })
  for (const name of ['a', 'b']) {
    router.addPod(name)
    router.setIndexReady(name, true)
  }
  return router
}
const request = (id: string, promptTokens = 4352): RoutingRequest => ({
  id,
  model: 'm',
  promptTokens,
  blockSize: 16,
  promptText: '',
  maxTokens: 16,
})
/** The index's answer: blocks of pods a and b. */
const held = (a: number, b: number) =>
  new Map([
    ['a', a],
    ['b', b],
  ])
const context = (nowMs: number) => ({ nowMs, random: createSeededRandom(3) })

describe('RouterCore', () => {
  it('counts a dispatched request as queued prefill until its first token, and as load until it ends', () => {
    const router = core()
    const route = router.route(request('r1'), held(256, 0), context(0))
    expect(route.decision.pod).toBe('a')
    router.dispatched(request('r1'), 'a', route, context(0))
    let [a] = router.podReports(0)
    expect(a?.load).toEqual({
      inFlight: 1,
      pendingRequests: 1,
      pendingPrefillTokens: 4352 - 4096,
      activeTokens: 4352,
    })
    router.firstToken('r1', 200)
    router.progress('r1', 10)
    ;[a] = router.podReports(200)
    expect(a?.load).toEqual({
      inFlight: 1,
      pendingRequests: 0,
      pendingPrefillTokens: 0,
      activeTokens: 4362,
    })
    expect(a?.ttft.observations).toBe(1)
    router.finished('r1', 300, 4096)
    ;[a] = router.podReports(300)
    expect(a?.load).toEqual({
      inFlight: 0,
      pendingRequests: 0,
      pendingPrefillTokens: 0,
      activeTokens: 0,
    })
    expect(a?.driftObservations).toBe(1)
  })

  it("counts as unseen only the waiting requests that were not this replica's when the metrics were read", () => {
    const router = core()
    for (const id of ['r1', 'r2']) {
      const route = router.route(request(id), held(256, 0), context(0))
      router.dispatched(request(id), 'a', route, context(0))
    }
    // Read while both were queued: the two waiting are ours.
    router.updateMetrics('a', { running: 0, waiting: 2, kvCacheUsage: 0.1 }, 10)
    router.firstToken('r1', 20)
    router.firstToken('r2', 20)
    const after = router.route(request('r3'), held(0, 0), context(30))
    expect(after.candidates.find((c) => c.name === 'a')?.metrics?.unseenWaiting).toBe(0)
    // Three waiting with none of ours pending: three someone else's (or preempted).
    router.updateMetrics('a', { running: 2, waiting: 3, kvCacheUsage: 0.1 }, 40)
    const later = router.route(request('r4'), held(0, 0), context(50))
    expect(later.candidates.find((c) => c.name === 'a')?.metrics?.unseenWaiting).toBe(3)
  })

  it('scores a pod whose index is not ready as cold', () => {
    const router = core()
    router.setIndexReady('a', false)
    const route = router.route(request('r'), held(256, 0), context(0))
    expect(route.candidates.find((c) => c.name === 'a')?.cachedBlocks).toBe(0)
    expect(route.candidates.find((c) => c.name === 'a')?.trust).toBe('load-only')
  })

  it('leaves an unhealthy pod out for the cool-down, but fails open when it is the only one left', () => {
    const router = core()
    const first = router.route(request('r1'), held(256, 0), context(0))
    router.dispatched(request('r1'), 'a', first, context(0))
    router.failed('r1', 0, true)
    expect(router.route(request('r2'), held(256, 0), context(10)).decision.pod).toBe('b')
    expect(
      router.route(request('r3'), held(256, 0), context(10), new Set(['b'])).decision.pod,
    ).toBe('a')
    expect(router.route(request('r4'), held(256, 0), context(6000)).decision.pod).toBe('a')
  })

  it('ignores metrics older than the staleness limit', () => {
    const router = core()
    router.updateMetrics('a', { running: 3, waiting: 9, kvCacheUsage: 0.9 }, 0)
    expect(
      router.route(request('r'), held(0, 0), context(1000)).candidates[0]?.metrics?.waiting,
    ).toBe(9)
    expect(router.route(request('r'), held(0, 0), context(2500)).candidates[0]?.metrics).toBe(null)
  })

  it('demotes a pod whose reported cached tokens keep contradicting the index', () => {
    const router = core()
    for (let i = 0; i < 12; i++) {
      const route = router.route(request(`r${i}`), held(256, 0), context(i))
      router.dispatched(request(`r${i}`), 'a', route, context(i))
      router.finished(`r${i}`, i + 1, 0)
    }
    const a = router.podReports(20).find((p) => p.name === 'a')
    expect(a?.trust).toBe('load-only')
    expect(
      router.route(request('x'), held(256, 0), context(20)).candidates.find((c) => c.name === 'a')
        ?.cachedBlocks,
    ).toBe(0)
  })
})
