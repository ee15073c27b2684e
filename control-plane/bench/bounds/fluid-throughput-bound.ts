import { type GpuProfile, numGpuBlocks } from '../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../../shared/gpu/step-cost-model.ts'
import type { HitCeiling } from './hit-ceiling.ts'
import type { RequestStream } from './request-stream.ts'

export type FluidTerm = 'prefill' | 'kv' | 'decode'

export interface FluidThroughputBound {
  /** The smallest of the three terms, requests/s over the pool. */
  requestsPerSecond: number
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
}

/**
 * The fluid throughput bound of `pods` pods of `profile` on a request stream, with the
 * prompt tokens the capacity-constrained ceiling (`capacity`) would serve from cache:
 *
 *   λ ≤ min( N·R_peak / ū,  N·C / S,  N·D_peak / (ō − 1) )
 *
 * - ū: mean uncached prompt tokens per request at the capacity ceiling; R_peak = B /
 *   t_step(B prefill tokens, nothing cached) for the step budget B (max_num_batched_tokens).
 * - C = min(max_num_seqs, blocks per pod / ((ū + ō) / block)): the requests a pod can
 *   hold if each needs blocks only for what it computes itself (its uncached prompt and
 *   its answer) and the cached part costs nothing: running requests share those blocks,
 *   and holding them once per pod is left out, so C is an upper bound.
 * - S = ū/R_peak + (ō − 1)·t_step(one decode at the mean context x̄ = p̄ + ō/2): the least
 *   time a request holds its KV (the first output token comes with the last prefill chunk).
 * - D_peak = C / t_step(C decodes at context x̄): the decode tokens/s of a full pod, the
 *   term that binds when decode dominates.
 * The step times are the profile's cost model; nothing is fitted. The terms treat prefill
 * and decode separately, so a mix of both may be somewhat slower than the smallest.
 */
export function fluidThroughputBound(
  stream: RequestStream,
  capacity: HitCeiling,
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
  const { stepMs } = createStepCostModel(profile)
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
  const meanServiceSeconds =
    meanUncachedTokens / prefillTokensPerSecond + (decodes * decodeMs(1)) / 1000
  const terms: Record<FluidTerm, number> = {
    prefill: (pods * prefillTokensPerSecond) / meanUncachedTokens,
    kv: (pods * kvConcurrency) / meanServiceSeconds,
    decode: (pods * decodeTokensPerSecond) / decodes,
  }
  const binding = (Object.keys(terms) as FluidTerm[]).reduce((a, b) =>
    terms[b] < terms[a] ? b : a,
  )
  return {
    requestsPerSecond: terms[binding],
    binding,
    terms,
    prefillTokensPerSecond,
    decodeTokensPerSecond,
    kvConcurrency,
    meanUncachedTokens,
    meanServiceSeconds,
  }
}
