import { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
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

export function predictTtftMs(
  request: RoutingRequest,
  pod: PodCandidate,
  stepBudget: number,
): number {
  const features = ttftFeatures(request, pod, stepBudget)
  return (
    pod.ttft.overheadMs +
    pod.ttft.msPerToken * effectiveWork(features) +
    (pod.memory ? admissionWaitMs(pod.memory, features.uncachedTokens) : 0)
  )
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
 * the scorer observes (recursive least squares with exponential forgetting). Starts from
 * the GPU profile's prior so a new pod is predicted sensibly; a pod that is slower or
 * faster than described (other GPU, other load) converges to its own constants. The
 * parameters are kept within a factor of 50 of the prior so a burst of outliers cannot
 * produce a negative or absurd model.
 */
export class OnlineTtftModel {
  private overhead: number
  private slope: number
  // Inverse-information matrix P (symmetric 2×2) of the estimate.
  private p00: number
  private p01: number
  private p11: number
  private readonly lambda: number
  private readonly prior: TtftModel
  private readonly pMax: readonly [number, number]
  observations = 0

  constructor(input: OnlineTtftModelOptionsInput) {
    const options = parseOptions(OnlineTtftModelOptions, input, 'ttft model')
    this.prior = options.prior
    this.lambda = options.forgettingFactor
    this.overhead = options.prior.overheadMs
    this.slope = options.prior.msPerToken
    const weight = options.priorWeight
    // Scale P to the features' magnitudes so both parameters move at a similar pace.
    this.p00 = 1 / weight
    this.p01 = 0
    this.p11 = 1 / (weight * 4096 * 4096)
    this.pMax = [this.p00, this.p11]
  }

  get model(): TtftModel {
    return { overheadMs: this.overhead, msPerToken: this.slope }
  }

  /** Constants another model fitted (an inspector replaying a replica's view). */
  restore(model: TtftModel, observations: number): void {
    this.overhead = model.overheadMs
    this.slope = model.msPerToken
    this.observations = observations
  }

  predict(work: number): number {
    return this.overhead + this.slope * work
  }

  /** One observed TTFT (ms) for a request whose effective work was `work`. */
  observe(work: number, ttftMs: number): void {
    if (!Number.isFinite(work) || !Number.isFinite(ttftMs) || work < 0 || ttftMs < 0) return
    const x0 = 1
    const x1 = work
    const px0 = this.p00 * x0 + this.p01 * x1
    const px1 = this.p01 * x0 + this.p11 * x1
    const denominator = this.lambda + x0 * px0 + x1 * px1
    const k0 = px0 / denominator
    const k1 = px1 / denominator
    // Huber-style: an outlier (a preemption, a stall the features cannot see) moves the
    // fit as much as a large ordinary error, no more.
    const predicted = this.predict(work)
    const limit = Math.max(this.prior.overheadMs, predicted * 0.5)
    const error = clamp(ttftMs - predicted, -limit, limit)
    this.overhead = clamp(this.overhead + k0 * error, 0, Math.max(1, this.prior.overheadMs) * 50)
    this.slope = clamp(
      this.slope + k1 * error,
      this.prior.msPerToken / 50,
      this.prior.msPerToken * 50,
    )
    // P ← (P − k·xᵀP) / λ, kept symmetric.
    const n00 = (this.p00 - k0 * px0) / this.lambda
    const n01 = (this.p01 - k0 * px1) / this.lambda
    const n11 = (this.p11 - k1 * px1) / this.lambda
    // Forgetting inflates P along directions the data does not excite (a pod that always
    // sees similar work); capping it at the prior's level bounds how fast the model can run.
    const scale = Math.min(1, (this.pMax[0] as number) / n00, (this.pMax[1] as number) / n11)
    this.p00 = n00 * scale
    this.p01 = n01 * scale
    this.p11 = n11 * scale
    this.observations++
  }
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value))
}
