import { describe, expect, it } from 'vitest'
import type { RoutingSpecInput } from '../../../shared/crd/routing-spec.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { stepCostOf } from '../../../shared/routing/pool-options.ts'
import type {
  PoolLookup,
  PoolRouter,
  RoutingRequest,
  StepCost,
} from '../../../shared/routing/pool-router.ts'
import { poolSpec, recordingPoolRouter } from '../../support/recording-pool-router.ts'

const routing: RoutingSpecInput = { strategy: 'kinference' }
const prior = stepCostOf(poolSpec(routing))
/** The pods decode twice as slowly as the GPU profile says, at every context. */
const truth: StepCost = {
  decodeStepMs: 2 * prior.decodeStepMs,
  msPerContextToken: 2 * prior.msPerContextToken,
}
const stepMsOf = (cost: StepCost, context: number) =>
  cost.decodeStepMs + cost.msPerContextToken * context

/** A request for the simulated pods: when it arrives, where it goes, what it holds. */
interface Arrival {
  id: string
  atMs: number
  pod: string
  promptTokens: number
  outputTokens: number
}

const lookupOf = (arrival: Arrival): PoolLookup => {
  const request: RoutingRequest = {
    id: arrival.id,
    model: 'm',
    promptTokens: arrival.promptTokens,
    blockSize: 16,
    promptText: '',
    maxTokens: arrival.outputTokens,
    blockKeys: new Uint32Array(0),
  }
  return { request: { routing: request, keys: request.blockKeys }, blocks: new Map() }
}

/** Sends `arrival` to its pod, whichever the strategy would choose. */
function send(router: PoolRouter, arrival: Arrival): void {
  const lookup = lookupOf(arrival)
  const chosen = router.score(lookup, arrival.atMs)
  const route = { ...chosen, decision: { ...chosen.decision, pod: arrival.pod } }
  router.dispatchNow(lookup, arrival.atMs, { route })
}

interface Decoding extends Arrival {
  generated: number
}

/** Requests a simulated pod runs at once; the others wait, first come first served. */
const maxRunning = 8

/**
 * Pods that run up to `maxRunning` of the requests they hold in one batch, a token each per
 * step (the first ends its prefill), a step taking `cost` at the context of the requests
 * past their prefill (prompts and tokens generated: what a decode step reads; requests
 * still waiting hold none of it), and tell the router each token when it goes by;
 * `beforeSend` runs before each arrival is sent.
 */
function decodeOnPods(
  router: PoolRouter,
  arrivals: readonly Arrival[],
  cost: StepCost,
  beforeSend: (arrival: Arrival) => void = () => {},
): void {
  const pods = new Map(
    router.podNames().map((name) => [name, { clockMs: 0, batch: [] as Decoding[] }]),
  )
  const advance = (pod: { clockMs: number; batch: Decoding[] }, untilMs: number) => {
    for (;;) {
      const running = pod.batch.slice(0, maxRunning)
      const decoding = running.filter((r) => r.generated > 0)
      const context = decoding.reduce((sum, r) => sum + r.promptTokens + r.generated, 0)
      const endMs = pod.clockMs + stepMsOf(cost, context)
      if (pod.batch.length === 0 || endMs > untilMs) break
      pod.clockMs = endMs
      for (const request of running) {
        request.generated++
        if (request.generated === 1) router.firstToken(request.id, endMs)
        else router.progress(request.id, request.generated, endMs)
        if (request.generated < request.outputTokens) continue
        router.finished(request.id, endMs, null)
        pod.batch.splice(pod.batch.indexOf(request), 1)
      }
    }
    if (pod.batch.length === 0) pod.clockMs = Math.max(pod.clockMs, untilMs)
  }
  for (const arrival of arrivals) {
    for (const pod of pods.values()) advance(pod, arrival.atMs)
    beforeSend(arrival)
    send(router, arrival)
    pods.get(arrival.pod)?.batch.push({ ...arrival, generated: 0 })
  }
  for (const pod of pods.values()) advance(pod, Number.POSITIVE_INFINITY)
}

/**
 * Requests to pods a and b in bursts and lulls, so that the context their batches hold
 * ranges from one prompt to a few hundred thousand tokens.
 */
function arrivalsOf(count: number, seed: number, outputTokens?: number): Arrival[] {
  const random = createSeededRandom(seed)
  const arrivals: Arrival[] = []
  let atMs = 0
  for (let i = 0; i < count; i++) {
    const burst = Math.floor(i / 40) % 2 === 0
    atMs += -Math.log(1 - random()) * (burst ? 150 : 2_500)
    arrivals.push({
      id: `r${i}`,
      atMs,
      pod: random() < 0.5 ? 'a' : 'b',
      promptTokens: 1_000 + Math.floor(random() * 15_000),
      outputTokens: outputTokens ?? 20 + Math.floor(random() * 200),
    })
  }
  return arrivals
}

const reported = (router: PoolRouter) => router.podReports(0)[0]?.stepCost

describe('PoolRouter: the decode step, fitted online', () => {
  it('converges to the pods’ real step cost, and their memory outlook uses it', () => {
    const { router } = recordingPoolRouter(routing)
    const arrivals = arrivalsOf(600, 1)
    decodeOnPods(router, arrivals, truth)
    const fitted = reported(router)
    expect(fitted?.observations).toBe(600)
    // The line, where the batches' contexts lie: within 5% of the truth (the prior is off 50%).
    for (const context of [20_000, 100_000, 200_000]) {
      const predicted = stepMsOf(fitted as StepCost, context)
      expect(Math.abs(predicted / stepMsOf(truth, context) - 1)).toBeLessThan(0.05)
    }
    // A request decoding on a with 50k tokens of context: the strategy sees the fitted step.
    const atMs = (arrivals.at(-1) as Arrival).atMs + 1e6
    send(router, { id: 'held', atMs, pod: 'a', promptTokens: 50_000, outputTokens: 100 })
    router.firstToken('held', atMs)
    const candidates = router.score(
      lookupOf({ ...(arrivals[0] as Arrival), atMs }),
      atMs,
    ).candidates
    const a = candidates.find((c) => c.name === 'a')?.memory
    expect(a?.msPerContextToken).toBe(fitted?.msPerContextToken)
    expect(Math.abs((a?.stepMs as number) / stepMsOf(truth, 50_000) - 1)).toBeLessThan(0.05)
    expect(candidates.find((c) => c.name === 'b')?.memory?.stepMs).toBe(fitted?.decodeStepMs)
  })

  it('keeps the prior when the pool turns online calibration off', () => {
    const { router } = recordingPoolRouter({ ...routing, kinference: { onlineCalibration: false } })
    decodeOnPods(router, arrivalsOf(200, 2), truth)
    expect(reported(router)).toEqual({ ...prior, observations: 0 })
    const candidates = router.score(lookupOf(arrivalsOf(1, 3)[0] as Arrival), 1e9).candidates
    expect(candidates[0]?.memory?.stepMs).toBe(prior.decodeStepMs)
    expect(candidates[0]?.memory?.msPerContextToken).toBe(prior.msPerContextToken)
  })

  it('observes no request that generated fewer than two tokens', () => {
    const { router } = recordingPoolRouter(routing)
    decodeOnPods(router, arrivalsOf(50, 4, 1), truth)
    expect(reported(router)).toEqual({ ...prior, observations: 0 })
  })

  it("observes no request sent to a pod that another replica's requests share", () => {
    const { router } = recordingPoolRouter(routing)
    const arrivals = arrivalsOf(100, 5)
    // Pod a's metrics, fresh at every arrival, show it running requests this replica did
    // not send: their context is not in what the replica counts there.
    decodeOnPods(router, arrivals, truth, ({ atMs }) =>
      router.updateMetrics('a', { running: 500, waiting: 0, kvCacheUsage: 0.2 }, atMs),
    )
    const onB = arrivals.filter((arrival) => arrival.pod === 'b').length
    expect(onB).toBeGreaterThan(20)
    expect(reported(router)?.observations).toBe(onB)
  })
})
