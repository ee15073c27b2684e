import { z } from 'zod'
import type {
  PodCandidate,
  PodScore,
  RoutingDecision,
  RoutingStrategy,
} from '../routing-strategy.ts'
import {
  cachedTokensOf,
  effectiveWork,
  type HostLink,
  predictTtftMs,
  type TierLoad,
  tierLoad,
  ttftFeatures,
  withLoaded,
} from '../ttft-model.ts'
import { createArrivalRate } from './create-arrival-rate.ts'
import { decodeInterferenceMs, remainingDecodeSteps } from './decode-interference.ts'
import { defineStrategy } from './define-strategy.ts'
import { fraction } from './fraction.ts'

/**
 * A pool’s `routing.kinference` block: its TTFT fit and late binding read it whatever the
 * strategy (pool-options.ts).
 */
export const KinferenceParameters = z.strictObject({
  speculativeTtlMs: z
    .int()
    .min(0)
    .max(60_000)
    .default(2_000)
    .describe(
      'How long blocks of a routed request count as cached on its pod before the pod’s own KV events confirm them.',
    ),
  prefillTokensPerSecond: z
    .number()
    .positive()
    .optional()
    .describe('Initial prefill rate per pod; default from the GPU profile, then fitted online.'),
  overheadMs: z
    .number()
    .min(0)
    .optional()
    .describe(
      'Initial fixed TTFT overhead per pod; default from the GPU profile, then fitted online.',
    ),
  onlineCalibration: z
    .boolean()
    .default(true)
    .describe('Re-fit prefill rate and overhead per pod from observed TTFTs.'),
  forgettingFactor: z
    .number()
    .min(0.5)
    .max(1)
    .default(0.98)
    .describe('Recursive-least-squares forgetting factor: closer to 1 remembers longer.'),
  lateBinding: z
    .boolean()
    .default(false)
    .describe(
      'Hold a request in the scorer while its best pod cannot start it (KV memory full, prefill queued), and route it again when pods report progress, instead of queueing it inside one pod.',
    ),
  copyHeadroom: fraction
    .default(0.85)
    .describe(
      'A pod may take a copy of a prefix another pod already holds only while its KV-cache usage stays under this fraction with the copy: in a pool short of memory a copy evicts what other requests need next.',
    ),
  maxHoldMs: z
    .int()
    .min(0)
    .max(600_000)
    .default(30_000)
    .describe('Longest a request is held by late binding before it goes to its best pod anyway.'),
  expectedOutputTokens: z
    .int()
    .positive()
    .max(1_000_000)
    .default(256)
    .describe(
      'Output tokens the memory outlook assumes for a request that sets no max_tokens (vLLM would allow up to the context length); a request that sets one is planned with its own.',
    ),
  decodeWeight: z
    .number()
    .min(0)
    .max(4)
    .default(0.25)
    .describe(
      'How much a millisecond of decoding counts against a millisecond of time to first token when choosing a pod: the slowdown a request suffers from the batch it joins, and the one it causes the requests running there. 0 chooses by TTFT alone.',
    ),
  hostLinkBytesPerSecond: z
    .number()
    .positive()
    .default(25e9)
    .describe(
      'Bandwidth of the link a pod loads KV blocks from its CPU tier over (vLLM OffloadingConnector), bytes/s: a CPU hit of N tokens is valued at N × KV bytes per token (the GPU profile’s) ÷ this, when that is less than recomputing them. 25e9: PCIe Gen4 x16 (32 GB/s per direction, as the L40S has) at about 80%.',
    ),
  driftTolerance: fraction
    .default(0.25)
    .describe(
      'Largest tolerated mean relative error between predicted and reported cached tokens before a pod is demoted from precise to approximate scoring.',
    ),
})

export type KinferenceParameters = z.infer<typeof KinferenceParameters>

export interface KinferenceStrategyOptions {
  /** Per-step token budget of the pool's pods (max_num_batched_tokens). */
  stepBudget: number
  /**
   * A pod may take a copy of a prefix another pod holds only while its KV memory stays
   * under this fraction with the copy (the pool's routing.kinference.copyHeadroom).
   */
  copyHeadroom: number
  /** Weight of decode interference against TTFT (routing.kinference.decodeWeight). */
  decodeWeight?: number
  /** How far back the pool's arrival rate is averaged. */
  rateWindowMs?: number
  /**
   * How a CPU-tier hit is priced (ttft-model.ts tierLoad): a pod loads it when that is
   * cheaper than recomputing it. Absent or null: CPU-tier hits count as uncached.
   */
  hostLink?: HostLink | null
}

/** The arrival rate's averaging window unless a test asks for another. */
const defaultRateWindowMs = 10_000

/**
 * Kinference: send each request where it costs the pool least in time to first token:
 * its own predicted TTFT, plus the delay its prefill work imposes on the requests that
 * will arrive at that pod while the work is ahead of them (about arrival rate × backlog
 * × its work, as in an M/G/1 queue). A warm pod does little work for a request; a cold
 * one recomputes the prefix, and while the pool is busy that recomputation is paid by
 * everyone queued behind it, so replication happens only when a warm pod's queue costs
 * more than that. Near-ties (within 2% or 2 ms) go to the pod with the least KV footprint
 * in flight, then at random, so idle pods share cold traffic.
 */
export function createKinferenceStrategy(options: KinferenceStrategyOptions): RoutingStrategy {
  const arrivals = createArrivalRate(options.rateWindowMs ?? defaultRateWindowMs)
  return {
    name: 'kinference',
    onRouted(_request, _pod, context) {
      arrivals.count(context.nowMs)
    },
    choose(request, candidates, context): RoutingDecision {
      if (candidates.length === 0)
        return { pod: null, reason: 'kinference: no candidate pod', scores: [] }
      const perPodRate =
        (arrivals.rate(context.nowMs) * trafficShareScale(candidates)) / candidates.length
      const costs: number[] = []
      const ttftCosts: number[] = []
      const decodeWeight = options.decodeWeight ?? 0
      // A CPU-tier hit counts as held where loading it beats recomputing it: the pod then
      // computes only the rest, and writes new GPU blocks for all of it (memory terms).
      const hostLink = options.hostLink ?? null
      const tierLoads = candidates.map((pod) =>
        tierLoad(request, pod, options.stepBudget, hostLink),
      )
      const held = candidates.map((pod, i) => withLoaded(pod, tierLoads[i] as TierLoad))
      const bestCached = Math.max(...held.map((pod) => cachedTokensOf(request, pod.cachedBlocks)))
      const headroom = options.copyHeadroom
      // Decode work ahead of each pod, once per decision: the cost and the tie-break read it.
      const ahead = candidates.map((pod) => remainingDecodeSteps(pod, request.maxTokens))
      const scores: PodScore[] = candidates.map((pod, i) => {
        const load = tierLoads[i] as TierLoad
        const features = ttftFeatures(request, held[i] as PodCandidate, options.stepBudget)
        const predicted = predictTtftMs(request, pod, options.stepBudget, load)
        const ownWork = pod.ttft.msPerToken * effectiveWork({ ...features, queuedTokens: 0 })
        // The load runs beside the pod's steps: it delays this request, not those behind it.
        const backlog = predicted - pod.ttft.overheadMs - load.ms
        let cost = predicted + perPodRate * backlog * ownWork
        ttftCosts.push(cost)
        cost +=
          decodeWeight * decodeInterferenceMs(request, pod, features.decoding, ahead[i] as number)
        // What the pod's KV must hold once every answer in flight and this request's own
        // are written: the running requests still write theirs.
        const reserved = pod.memory
          ? pod.memory.usedTokens +
            pod.memory.pendingTokens +
            (ahead[i] as number) +
            features.uncachedTokens +
            load.tokens +
            request.maxTokens
          : 0
        const capacity = pod.memory?.capacityTokens ?? Number.POSITIVE_INFINITY
        // What will not fit: vLLM admits now and preempts later, and whatever overflows is
        // computed again. Charged as that prefill, on any pod.
        cost += Math.max(0, reserved - capacity) * pod.ttft.msPerToken
        // Recomputing a prefix another pod holds only where the copy fits with room to
        // spare once everyone's answers are reserved: in a pool short of memory a copy
        // evicts what others need next, and they are preempted to recompute it. A copy
        // that adds less prefill than the warm pod computes anyway is no such copy: a
        // conversation whose warm pod holds only its system prompt recomputes its history
        // wherever it goes, and barring the move piled such turns twenty deep on one pod
        // while the others drained (docs/benchmarks.md, multi-turn).
        const cached = cachedTokensOf(request, (held[i] as PodCandidate).cachedBlocks)
        const recompute = bestCached - cached
        const copies =
          recompute > 2 * request.blockSize && recompute > request.promptTokens - bestCached
        if (copies && reserved > headroom * capacity) cost += outOfRoomMs
        costs.push(cost)
        return {
          pod: pod.name,
          cachedTokens: cached,
          predictedTtftMs: predicted,
          score: cost,
        }
      })
      const best = Math.min(...costs)
      // Ties are judged on the TTFT side: decode terms run to seconds, and a slack in
      // proportion to them would make every pod a near-tie.
      const bestTtft = Math.min(...ttftCosts)
      // A request no pod holds half of places its prefix for the requests that follow:
      // among pods within 10% of the best, the one with the most free memory takes it
      // (it will hold the prefix and its traffic); otherwise near-ties (2% or 2 ms) go to
      // the pod with the least decode work ahead.
      const placing = bestCached * 2 < request.promptTokens
      const slack = Math.max(2, bestTtft * (placing ? 0.1 : 0.02))
      // Memory counts what the requests in flight will still write (their answers), not
      // only what they hold now: a pod of fresh long answers is fuller than it looks.
      const loads = candidates.map((pod, i) => {
        const steps = ahead[i] as number
        return placing && pod.memory
          ? Math.round(pod.memory.usedTokens + pod.memory.pendingTokens + steps)
          : steps
      })
      const near = candidates.flatMap((_, i) => ((costs[i] as number) <= best + slack ? [i] : []))
      const lightest = Math.min(...near.map((i) => loads[i] as number))
      const finalists = near.filter((i) => loads[i] === lightest)
      const chosen = candidates[
        finalists[Math.floor(context.random() * finalists.length)] as number
      ] as PodCandidate
      const mine = scores.find((s) => s.pod === chosen.name) as PodScore
      const others = scores
        .filter((s) => s.pod !== chosen.name)
        .map((s) => s.predictedTtftMs as number)
      const runnerUp = others.length > 0 ? Math.min(...others) : null
      return {
        pod: chosen.name,
        reason:
          `kinference: predicted TTFT ${Math.round(mine.predictedTtftMs as number)} ms with ${mine.cachedTokens}/${request.promptTokens} tokens cached` +
          (runnerUp === null ? '' : `, next best ${Math.round(runnerUp)} ms`),
        scores,
      }
    },
  }
}

/**
 * How much more traffic the pool carries than this replica sends it, by Little's law: the
 * requests the pods report running and waiting over the ones this replica has in flight
 * there. Other scorer replicas' arrivals are invisible to this one's rate otherwise.
 */
function trafficShareScale(candidates: readonly PodCandidate[]): number {
  let own = 0
  let total = 0
  for (const pod of candidates) {
    if (!pod.metrics) return 1
    own += pod.load.inFlight
    total += pod.metrics.running + pod.metrics.waiting
  }
  return own > 0 ? Math.max(1, total / own) : 1
}

/** Added to the cost of a copy that does not fit: chosen only when nothing else can be. */
const outOfRoomMs = 1e9

/** kinference as a routing-strategy plugin (registered in strategy-registry.ts). */
export const kinferenceStrategy = defineStrategy({
  name: 'kinference',
  description: 'lowest predicted TTFT from KV overlap and queued prefill.',
  parameters: { block: 'kinference', schema: KinferenceParameters },
  create: ({ copyHeadroom, decodeWeight, hostLinkBytesPerSecond }, pool) =>
    createKinferenceStrategy({
      stepBudget: pool.stepBudget,
      copyHeadroom,
      decodeWeight,
      hostLink:
        pool.kvBytesPerToken == null
          ? null
          : { kvBytesPerToken: pool.kvBytesPerToken, bytesPerSecond: hostLinkBytesPerSecond },
    }),
})
