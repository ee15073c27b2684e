import { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
import { OnlineLinearFit } from './online-linear-fit.ts'
import { admissionWaitMs } from './pod-memory.ts'
import type {
  PodCandidate,
  PodLoad,
  PodMetricsView,
  RoutingRequest,
  TtftModel,
} from './routing-strategy.ts'

/** What the TTFT of a request sent to a pod depends on, at the moment it is sent. */
export interface TtftFeatures {
  /** Uncached prefill tokens ahead of this request on the pod (its queue). */
  queuedTokens: number
  /** This request's own uncached tokens. */
  uncachedTokens: number
  /** Requests decoding on the pod: each takes one token of every step's budget. */
  decoding: number
  /** The pod's per-step token budget (max_num_batched_tokens). */
  stepBudget: number
}

/**
 * Prefill work in "full-budget tokens": vLLM V1 gives each step `stepBudget` tokens,
 * running decodes first, so prefill proceeds at (budget − decodes) tokens a step and a
 * busy pod takes proportionally longer for the same work. A floor keeps the model sane
 * when decodes fill the budget (vLLM still admits a chunk).
 */
export function effectiveWork(features: TtftFeatures): number {
  const share = Math.max(0.125, 1 - features.decoding / features.stepBudget)
  return (features.queuedTokens + features.uncachedTokens) / share
}

/** Tokens of a prompt a pod would serve from cache: vLLM never hits the last token. */
export function cachedTokensOf(request: RoutingRequest, cachedBlocks: number): number {
  const cap = Math.floor((request.promptTokens - 1) / request.blockSize) * request.blockSize
  return Math.max(0, Math.min(cachedBlocks * request.blockSize, cap))
}

/**
 * What the pod would have to do before this request's first token: the uncached prefill
 * this replica sent and has not seen answered, plus what others put ahead of it
 * (unseenWork). Decodes are running requests past prefill.
 */
export function ttftFeatures(
  request: RoutingRequest,
  pod: PodCandidate,
  stepBudget: number,
): TtftFeatures {
  const { load, metrics } = pod
  const uncachedTokens = request.promptTokens - cachedTokensOf(request, pod.cachedBlocks)
  const decoding = metrics
    ? Math.max(0, metrics.running - load.pendingRequests)
    : Math.max(0, load.inFlight - load.pendingRequests)
  return {
    queuedTokens:
      load.pendingPrefillTokens + unseenWork(load, metrics, request.promptTokens, uncachedTokens),
    uncachedTokens,
    decoding,
    stepBudget,
  }
}

/**
 * Prefill ahead that this replica did not send or no longer counts as pending. Its own
 * preempted requests wait to recompute what they held (waiting beyond its pending, when no
 * other replica sends there). Another replica's waiting request is taken to need what this
 * one would there (traffic on a pod shares what it holds), and no more than this replica's
 * pending ones there do on average: two estimates, each too high in its own case (a cold
 * pod; one fresh prefix among a few pending). Sized instead as a request in flight there,
 * they made the queue of a pod holding a popular prefix look twice its length with three
 * replicas, and prefixes were copied that should not have been (docs/benchmarks.md).
 */
function unseenWork(
  load: PodLoad,
  metrics: PodMetricsView | null,
  promptTokens: number,
  uncachedTokens: number,
): number {
  if (!metrics) return 0
  // Counted against what was pending when the metrics were read, not now: a request
  // answered since would otherwise look like somebody else's.
  const unseen = metrics.unseenWaiting ?? Math.max(0, metrics.waiting - load.pendingRequests)
  const foreign = metrics.foreignRequests ?? 0
  const preempted = Math.max(0, unseen - foreign)
  const footprint = load.inFlight > 0 ? load.activeTokens / load.inFlight : promptTokens
  const ownTypical =
    load.pendingRequests > 0 ? load.pendingPrefillTokens / load.pendingRequests : uncachedTokens
  return preempted * footprint + Math.min(unseen, foreign) * Math.min(uncachedTokens, ownTypical)
}

/**
 * Predicted TTFT of the request on the pod: its overhead, the prefill ahead and its own,
 * the wait for KV memory, and, with `load`, blocks loaded from the CPU tier instead of
 * computed: they take new GPU blocks like computed ones (the memory terms count them) and
 * the load's time instead of prefill.
 */
export function predictTtftMs(
  request: RoutingRequest,
  pod: PodCandidate,
  stepBudget: number,
  load: TierLoad = noTierLoad,
): number {
  const features = ttftFeatures(request, withLoaded(pod, load), stepBudget)
  return (
    pod.ttft.overheadMs +
    pod.ttft.msPerToken * effectiveWork(features) +
    (pod.memory ? admissionWaitMs(pod.memory, features.uncachedTokens + load.tokens) : 0) +
    load.ms
  )
}

/**
 * The pod's host link as the router prices a load from the CPU tier: the KV bytes of a
 * token (the pool's GPU profile) over the link's bytes per second (a router parameter,
 * routing.kinference.hostLinkBytesPerSecond).
 */
export interface HostLink {
  kvBytesPerToken: number
  bytesPerSecond: number
}

/** The medium vLLM's OffloadingConnector keeps blocks in host memory under (its events'). */
export const cpuMedium = 'CPU'

/** Blocks of a request a pod loads from its CPU tier, their tokens, and how long that takes. */
export interface TierLoad {
  blocks: number
  tokens: number
  ms: number
}

export const noTierLoad: TierLoad = { blocks: 0, tokens: 0, ms: 0 }

/**
 * What the pod loads from its CPU tier for the request: vLLM's connector loads every block
 * that continues the GPU hit (up to the last prompt token, never hit), whatever it costs,
 * in tokens × KV bytes per token ÷ the link's bandwidth (0 ms when the link is unknown).
 */
export function cpuLoad(
  request: RoutingRequest,
  pod: PodCandidate,
  hostLink: HostLink | null,
): TierLoad {
  const held = pod.tierBlocks?.[cpuMedium] ?? 0
  if (!(held > 0)) return noTierLoad
  const gpu = cachedTokensOf(request, pod.cachedBlocks)
  const tokens = cachedTokensOf(request, pod.cachedBlocks + held) - gpu
  if (tokens <= 0) return noTierLoad
  const ms = hostLink ? (tokens * hostLink.kvBytesPerToken * 1000) / hostLink.bytesPerSecond : 0
  return { blocks: tokens / request.blockSize, tokens, ms }
}

/**
 * The CPU tier's hit as kinference values it: the load when loading takes less than
 * recomputing those tokens on the pod (its fitted msPerToken over their work, its decodes
 * sharing the steps), else nothing (the blocks count as uncached). Without a host link
 * (the KV bytes of a token unknown), nothing.
 */
export function tierLoad(
  request: RoutingRequest,
  pod: PodCandidate,
  stepBudget: number,
  hostLink: HostLink | null,
): TierLoad {
  if (hostLink === null) return noTierLoad
  const load = cpuLoad(request, pod, hostLink)
  if (load.tokens === 0) return noTierLoad
  const features = ttftFeatures(request, pod, stepBudget)
  const recomputeMs =
    pod.ttft.msPerToken *
    effectiveWork({ ...features, queuedTokens: 0, uncachedTokens: load.tokens })
  return load.ms < recomputeMs ? load : noTierLoad
}

/** The pod as if `load`'s blocks were in its GPU already (the candidate itself without one). */
export function withLoaded(pod: PodCandidate, load: TierLoad): PodCandidate {
  return load.blocks > 0 ? { ...pod, cachedBlocks: pod.cachedBlocks + load.blocks } : pod
}

export const OnlineTtftModelOptions = z.strictObject({
  prior: z.custom<TtftModel>((value) => typeof value === 'object' && value !== null),
  forgettingFactor: z.number().describe('Recursive-least-squares forgetting factor, (0.5, 1]'),
  priorWeight: z
    .number({ error: 'must be a number > 0' })
    .gt(0, { error: 'must be a number > 0' })
    .default(2)
    .describe('How much the prior is trusted, in equivalent observations'),
})
export type OnlineTtftModelOptions = z.infer<typeof OnlineTtftModelOptions>
export type OnlineTtftModelOptionsInput = z.input<typeof OnlineTtftModelOptions>

/**
 * TTFT ≈ overhead + msPerToken × effective work, per pod, re-fitted online from the TTFTs
 * the scorer observes (an OnlineLinearFit of effective work, on the scale of a step
 * budget's tokens). Starts from the GPU profile's prior so a new pod is predicted
 * sensibly; a pod that is slower or faster than described (other GPU, other load)
 * converges to its own constants.
 */
export class OnlineTtftModel {
  private readonly fit: OnlineLinearFit

  constructor(input: OnlineTtftModelOptionsInput) {
    const options = parseOptions(OnlineTtftModelOptions, input, 'ttft model')
    this.fit = new OnlineLinearFit({
      prior: { intercept: options.prior.overheadMs, slope: options.prior.msPerToken },
      forgettingFactor: options.forgettingFactor,
      priorWeight: options.priorWeight,
      featureScale: 4096,
    })
  }

  get observations(): number {
    return this.fit.observations
  }

  get model(): TtftModel {
    const { intercept, slope } = this.fit.model
    return { overheadMs: intercept, msPerToken: slope }
  }

  /** Constants another model fitted (an inspector replaying a replica's view). */
  restore(model: TtftModel, observations: number): void {
    this.fit.restore({ intercept: model.overheadMs, slope: model.msPerToken }, observations)
  }

  predict(work: number): number {
    return this.fit.predict(work)
  }

  /** One observed TTFT (ms) for a request whose effective work was `work`. */
  observe(work: number, ttftMs: number): void {
    this.fit.observe(work, ttftMs)
  }
}
