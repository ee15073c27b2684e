import { type GpuProfile, numGpuBlocks } from '../../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../../../shared/gpu/step-cost-model.ts'
import type { HitCeiling } from './hit-ceiling.ts'
import type { RequestStream } from './request-stream.ts'
import { sharedStepWork } from './shared-step-work.ts'

/** `steps`: prefill and decode sharing each step's budget (shared-step-work.ts). */
export type FluidTerm = 'prefill' | 'kv' | 'decode' | 'steps'

export interface FluidThroughputBound {
  /** The smallest of the four terms, requests/s over the pool. */
  requestsPerSecond: number
  /** The smallest of prefill, kv and decode alone: the bound before `steps`, for comparison. */
  loose: number
  binding: FluidTerm
  terms: Record<FluidTerm, number>
  /** R_peak: prefill tokens/s of one pod in budget-sized steps. */
  prefillTokensPerSecond: number
  /** D_peak: decode tokens/s of one pod at the largest batch its KV and max_num_seqs allow. */
  decodeTokensPerSecond: number
  /** Requests one pod can hold in KV at once (fluid, so fractional). */
  kvConcurrency: number
  meanUncachedTokens: number
  /** Seconds a request holds KV at the least: prefill at R_peak, decodes at batch 1. */
  meanServiceSeconds: number
  /** Least busy seconds of one pod per request with prefill and decode in shared steps. */
  sharedStepSeconds: number
}

/**
 * The fluid throughput bound of `pods` pods of `profile` on a request stream, with the
 * prompt tokens the capacity-constrained ceiling (`capacity`) would serve from cache:
 *
 *   λ ≤ min( N / P̄,  N·C / S,  N·D_peak / (ō − 1),  N / W̄ )
 *
 * - P̄: the mean time one pod needs for a request's prefill, its u uncached tokens after c
 *   cached (the capacity ceiling's hits for that request) in full-budget steps of B tokens
 *   (max_num_batched_tokens): (u/B)·t_step(B tokens reading c + u/2 + B/2 of context per
 *   chunk, attention B·(c + u/2)). Long prompts pay for attending to their own prefix,
 *   which a per-token rate misses. R_peak = B / t_step(B tokens, nothing cached) is
 *   reported beside it; ū is the mean uncached prompt.
 * - C = min(max_num_seqs, blocks per pod / ((ū + ō) / block)): the requests a pod can
 *   hold if each needs blocks only for what it computes itself (its uncached prompt and
 *   its answer) and the cached part costs nothing: running requests share those blocks,
 *   and holding them once per pod is left out, so C is an upper bound.
 * - S = P̄ + (ō − 1)·t_step(one decode at the mean context x̄ = p̄ + ō/2): the least
 *   time a request holds its KV (the first output token comes with the last prefill chunk).
 * - D_peak = C / t_step(C decodes at context x̄): the decode tokens/s of a full pod, the
 *   term that binds when decode dominates.
 * - W̄: the least busy time of a pod per request when its prefill chunks and decodes
 *   share steps (sharedStepWork): every token, context read and attention unit of both,
 *   in at least as many steps as the budget, max_num_seqs and the KV the decoding requests
 *   hold on average allow. It is at least P̄, so it is the tighter where both kinds of work
 *   matter; `loose` is the bound without it. (The decode term's C counts each request's
 *   peak KV, u + o, so it is not strictly a bound on the batch: staggered requests hold
 *   u + o/2 on average.)
 * The step times are the profile's cost model; nothing is fitted.
 */
export function fluidThroughputBound(
  stream: RequestStream,
  capacity: HitCeiling & { hitBlocksByRequest?: readonly number[] },
  profile: GpuProfile,
  pods: number,
): FluidThroughputBound {
  const { requests, blockSize } = stream
  const n = Math.max(1, requests.length)
  const mean = (f: (r: (typeof requests)[number]) => number) =>
    requests.reduce((sum, r) => sum + f(r), 0) / n
  const meanOutput = mean((r) => r.outputTokens)
  const meanPrompt = mean((r) => r.promptTokens)
  const meanUncachedTokens = (capacity.promptTokens - capacity.hitTokens) / n
  const meanBlocks = (meanUncachedTokens + meanOutput) / blockSize
  const context = meanPrompt + meanOutput / 2
  const cost = createStepCostModel(profile)
  const { stepMs } = cost
  const budget = profile.scheduler.maxNumBatchedTokens
  const prefillTokensPerSecond =
    (budget * 1000) /
    stepMs({
      tokens: budget,
      decodeContext: 0,
      prefillContext: budget,
      prefillAttention: (budget * budget) / 2,
    })
  const decodeMs = (batch: number) =>
    stepMs({
      tokens: batch,
      decodeContext: batch * context,
      prefillContext: 0,
      prefillAttention: 0,
    })
  const kvConcurrency = Math.min(profile.scheduler.maxNumSeqs, numGpuBlocks(profile) / meanBlocks)
  const decodeTokensPerSecond = (kvConcurrency * 1000) / decodeMs(kvConcurrency)
  const decodes = meanOutput - 1
  const prefillSeconds = (cached: number, uncached: number) =>
    (uncached / budget) *
    (stepMs({
      tokens: budget,
      decodeContext: 0,
      prefillContext: cached + uncached / 2 + budget / 2,
      prefillAttention: budget * (cached + uncached / 2),
    }) /
      1000)
  const byRequest = capacity.hitBlocksByRequest
  // Without per-request hits, the mean uncached prompt with nothing before it: leaving out
  // the cached context lowers each request's time, and the rest is convex in u, so this
  // is no more than the mean of the per-request times and the bound stays a bound.
  const meanPrefillSeconds =
    byRequest && byRequest.length === requests.length && requests.length > 0
      ? requests.reduce((sum, r, i) => {
          const cached = (byRequest[i] as number) * blockSize
          return sum + prefillSeconds(cached, r.promptTokens - cached)
        }, 0) / n
      : prefillSeconds(0, meanUncachedTokens)
  const meanServiceSeconds = meanPrefillSeconds + (decodes * decodeMs(1)) / 1000
  const hasHits = byRequest && byRequest.length === requests.length
  // Without per-request hits, the mean uncached prompt with nothing cached, as for P̄: less
  // context and (convexity) less attention than the requests' own, so still a bound.
  const shared = sharedStepWork(
    requests.map((r, i) => {
      const cached = hasHits ? (byRequest[i] as number) * blockSize : 0
      const uncached = hasHits ? r.promptTokens - cached : meanUncachedTokens
      return { cachedTokens: cached, uncachedTokens: uncached, outputTokens: r.outputTokens }
    }),
    cost,
    {
      budget,
      maxNumSeqs: profile.scheduler.maxNumSeqs,
      kvTokens: numGpuBlocks(profile) * blockSize,
    },
  )
  const terms: Record<FluidTerm, number> = {
    prefill: pods / meanPrefillSeconds,
    kv: (pods * kvConcurrency) / meanServiceSeconds,
    decode: (pods * decodeTokensPerSecond) / decodes,
    steps: pods / shared.secondsPerRequest,
  }
  // A later term binds only when clearly below: with no decodes `steps` is the prefill term
  // in other arithmetic, and the earlier name says why.
  const smallest = (names: FluidTerm[]) =>
    names.reduce((a, b) => (terms[b] < terms[a] * (1 - 1e-9) ? b : a))
  const binding = smallest(['prefill', 'kv', 'decode', 'steps'])
  return {
    requestsPerSecond: terms[binding],
    loose: terms[smallest(['prefill', 'kv', 'decode'])],
    binding,
    terms,
    prefillTokensPerSecond,
    decodeTokensPerSecond,
    kvConcurrency,
    meanUncachedTokens,
    meanServiceSeconds,
    sharedStepSeconds: shared.secondsPerRequest,
  }
}
