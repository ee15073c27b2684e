import { describe, expect, it } from 'vitest'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { routerSettings } from '../../../shared/routing/pool-options.ts'
import {
  PoolRouter,
  type RouteResult,
  type RoutingRequest,
  type RoutingStrategy,
} from '../../../shared/routing/pool-router.ts'
import { createDynamoStrategy } from '../../../shared/routing/strategies/create-dynamo-strategy.ts'
import { createKinferenceStrategy } from '../../../shared/routing/strategies/create-kinference-strategy.ts'
import { createRoundRobinStrategy } from '../../../shared/routing/strategies/create-round-robin-strategy.ts'
import { blockKeys } from './strategies/routing-fixtures.ts'

/** Round robin that writes down the lifecycle hooks the router calls. */
function recording(): { strategy: RoutingStrategy; calls: string[] } {
  const calls: string[] = []
  const { choose } = createRoundRobinStrategy()
  return {
    calls,
    strategy: {
      name: 'round-robin',
      choose,
      onRouted: (routed, pod, _context, candidate) =>
        calls.push(
          `routed ${routed.id} ${pod} (${candidate.name}, ${candidate.cachedBlocks} cached)`,
        ),
      onFirstToken: (id) => calls.push(`first token ${id}`),
      onReleased: (id) => calls.push(`released ${id}`),
      onPodRemoved: (pod) => calls.push(`removed ${pod}`),
    },
  }
}

const spec = InferencePoolSpec.parse({
  selector: { matchLabels: {} },
  targetPort: 8000,
  models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
  gpuProfile: 'l40s-27b-fp8',
})

/** Pods a and b, their indexes ready, routed with these settings rather than the spec's. */
function core(
  strategy: RoutingStrategy = createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 }),
) {
  const router = new PoolRouter({
    name: 'p',
    spec,
    index: createMemoryKvIndex(),
    random: createSeededRandom(3),
    indexNowMs: () => 0,
    onError: (message) => {
      throw new Error(message)
    },
    settings: {
      ...routerSettings(spec),
      strategy,
      stepBudget: 2048,
      prior: { overheadMs: 44, msPerToken: 0.1445 },
      onlineCalibration: true,
      forgettingFactor: 0.98,
      driftTolerance: 0.25,
      metricsStalenessMs: 2000,
      unhealthyCooldownMs: 5000,
      kvCapacityTokens: null,
      stepCost: { decodeStepMs: 43, msPerContextToken: 2e-4 },
    },
  })
  for (const name of ['a', 'b']) {
    router.addPod(name, 0)
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
  blockKeys: new Uint32Array(0),
})
/** The request looked up: the index holds `a` of its blocks on pod a, `b` on pod b. */
const held = (routing: RoutingRequest, a: number, b: number) => ({
  request: { routing, keys: routing.blockKeys },
  blocks: new Map([
    ['a', a],
    ['b', b],
  ]),
})

/** The router's choice for `routing`, nothing dispatched. */
function choose(
  router: PoolRouter,
  routing: RoutingRequest,
  blocks: [number, number],
  nowMs: number,
  exclude?: ReadonlySet<string>,
): RouteResult {
  return router.score(held(routing, ...blocks), nowMs, exclude)
}

/** Routes `routing` and sends it to `pod`, whichever pod the strategy chose. */
function send(
  router: PoolRouter,
  routing: RoutingRequest,
  pod: string,
  blocks: [number, number],
  nowMs: number,
): RouteResult {
  const chosen = choose(router, routing, blocks, nowMs)
  const forced = { ...chosen, decision: { ...chosen.decision, pod } }
  return router.dispatchNow(held(routing, ...blocks), nowMs, { route: forced })
}

describe('PoolRouter, following its requests pod by pod', () => {
  it('counts a dispatched request as queued prefill until its first token, and as load until it ends', () => {
    const router = core()
    const route = choose(router, request('r1'), [256, 0], 0)
    expect(route.decision.pod).toBe('a')
    router.dispatchNow(held(request('r1'), 256, 0), 0, { route })
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

  it('tells the strategy of a request’s dispatch, first token and end, once each', () => {
    const { strategy, calls } = recording()
    const router = core(strategy)
    for (const [id, pod] of [
      ['r1', 'a'],
      ['r2', 'b'],
    ] as const) {
      send(router, request(id), pod, [256, 16], 0)
    }
    router.firstToken('r1', 10)
    router.firstToken('r1', 11)
    router.progress('r1', 5)
    router.finished('r1', 20, 4096)
    router.finished('r1', 21, 4096)
    router.failed('r2', 30, false)
    router.failed('r2', 31, false)
    router.firstToken('never-sent', 40)
    expect(calls).toEqual([
      'routed r1 a (a, 256 cached)',
      'routed r2 b (b, 16 cached)',
      'first token r1',
      'released r1',
      'released r2',
    ])
  })

  it('lets a removed pod’s requests go without a release', () => {
    const { strategy, calls } = recording()
    const router = core(strategy)
    send(router, request('r1'), 'a', [0, 0], 0)
    router.removePod('a', 0)
    router.firstToken('r1', 10)
    router.finished('r1', 20, null)
    expect(calls).toEqual(['routed r1 a (a, 0 cached)', 'removed a'])
  })

  it('keeps Dynamo’s active blocks: shared ones once, prefill until the first token, all until the end', () => {
    const router = core(createDynamoStrategy())
    const chat = (id: string): RoutingRequest => ({
      ...request(id),
      blockKeys: blockKeys(['system', 256], [id, 16]),
    })
    const costOfA = () => choose(router, chat('probe'), [0, 0], 0).decision.scores[0]?.score
    for (const id of ['r1', 'r2']) {
      send(router, chat(id), 'a', [0, 0], 0)
    }
    // prefill (2 × 272 pending + 272) blocks; decode 256 + 2 × 16 active + 16 new.
    expect(costOfA()).toBe(816 + 304)
    router.firstToken('r1', 10)
    router.firstToken('r2', 10)
    expect(costOfA()).toBe(272 + 304)
    router.finished('r1', 20, 0)
    expect(costOfA()).toBe(272 + 272 + 16)
    router.failed('r2', 30, false)
    expect(costOfA()).toBe(272 + 272)
  })

  it("counts as unseen only the waiting requests that were not this replica's when the metrics were read", () => {
    const router = core()
    for (const id of ['r1', 'r2']) {
      send(router, request(id), 'a', [256, 0], 0)
    }
    // Read while both were queued: the two waiting are ours.
    router.updateMetrics('a', { running: 0, waiting: 2, kvCacheUsage: 0.1 }, 10)
    router.firstToken('r1', 20)
    router.firstToken('r2', 20)
    const after = choose(router, request('r3'), [0, 0], 30)
    expect(after.candidates.find((c) => c.name === 'a')?.metrics?.unseenWaiting).toBe(0)
    // Three waiting with none of ours pending: three someone else's (or preempted).
    router.updateMetrics('a', { running: 2, waiting: 3, kvCacheUsage: 0.1 }, 40)
    const later = choose(router, request('r4'), [0, 0], 50)
    expect(later.candidates.find((c) => c.name === 'a')?.metrics?.unseenWaiting).toBe(3)
  })

  it('fits the TTFT model only from requests whose whole queue this replica saw', () => {
    const router = core()
    const fitted = () => router.podReports(0)[0]?.ttft.observations
    // Someone else's three requests wait on a: a TTFT there includes work this replica
    // did not send and can only estimate, so it must not flatten the fit.
    router.updateMetrics('a', { running: 0, waiting: 3, kvCacheUsage: 0.1 }, 0)
    send(router, request('r1'), 'a', [0, 0], 1)
    router.firstToken('r1', 3000)
    expect(fitted()).toBe(0)
    router.updateMetrics('a', { running: 0, waiting: 0, kvCacheUsage: 0.1 }, 3001)
    send(router, request('r2'), 'a', [0, 0], 3002)
    router.firstToken('r2', 3700)
    expect(fitted()).toBe(1)
  })

  it('scores a pod whose index is not ready as cold', () => {
    const router = core()
    router.setIndexReady('a', false)
    const route = choose(router, request('r'), [256, 0], 0)
    expect(route.candidates.find((c) => c.name === 'a')?.cachedBlocks).toBe(0)
    expect(route.candidates.find((c) => c.name === 'a')?.trust).toBe('load-only')
  })

  it('leaves an unhealthy pod out for the cool-down, but fails open when it is the only one left', () => {
    const router = core()
    send(router, request('r1'), 'a', [256, 0], 0)
    router.failed('r1', 0, true)
    expect(choose(router, request('r2'), [256, 0], 10).decision.pod).toBe('b')
    expect(choose(router, request('r3'), [256, 0], 10, new Set(['b'])).decision.pod).toBe('a')
    expect(choose(router, request('r4'), [256, 0], 6000).decision.pod).toBe('a')
  })

  it('leaves an unreachable pod out however long it lasts, and takes it back once it answers', () => {
    const router = core()
    send(router, request('r1'), 'a', [256, 0], 0)
    router.failed('r1', 0, true)
    router.setReachable('a', false, 0)
    // Past the failure's cool-down, still out; a healthy report says so too.
    expect(choose(router, request('r2'), [256, 0], 60_000).decision.pod).toBe('b')
    expect(router.podReports(60_000).find((p) => p.name === 'a')?.healthy).toBe(false)
    router.setReachable('a', true, 60_000)
    // Back at once: the failure was the outage's, its cool-down no longer counts.
    expect(choose(router, request('r3'), [256, 0], 1).decision.pod).toBe('a')
    expect(router.podReports(1).find((p) => p.name === 'a')?.healthy).toBe(true)
  })

  it('ignores metrics older than the staleness limit', () => {
    const router = core()
    router.updateMetrics('a', { running: 3, waiting: 9, kvCacheUsage: 0.9 }, 0)
    expect(choose(router, request('r'), [0, 0], 1000).candidates[0]?.metrics?.waiting).toBe(9)
    expect(choose(router, request('r'), [0, 0], 2500).candidates[0]?.metrics).toBe(null)
  })

  it('demotes a pod whose reported cached tokens keep contradicting the index', () => {
    const router = core()
    for (let i = 0; i < 12; i++) {
      send(router, request(`r${i}`), 'a', [256, 0], i)
      router.finished(`r${i}`, i + 1, 0)
    }
    const a = router.podReports(20).find((p) => p.name === 'a')
    expect(a?.trust).toBe('load-only')
    expect(
      choose(router, request('x'), [256, 0], 20).candidates.find((c) => c.name === 'a')
        ?.cachedBlocks,
    ).toBe(0)
  })
})
