import { describe, expect, it } from 'vitest'
import { fluidThroughputBound } from '../../../../../control-plane/lab/bench/bounds/fluid-throughput-bound.ts'
import type { HitCeiling } from '../../../../../control-plane/lab/bench/bounds/hit-ceiling.ts'
import type { RequestStream } from '../../../../../control-plane/lab/bench/bounds/request-stream.ts'
import { h200x32bFp8, l40s27bFp8 } from '../../../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../../../../shared/gpu/step-cost-model.ts'

/** `n` requests of `prompt` + `output` tokens (the bound reads only their lengths). */
const uniform = (prompt: number, output: number, n = 10): RequestStream => ({
  blockSize: 16,
  requests: Array.from({ length: n }, (_, i) => ({
    conversation: i,
    turn: 0,
    promptTokens: prompt,
    outputTokens: output,
    promptBlocks: [],
    answerBlocks: [],
  })),
})
/** The capacity ceiling, as a share of the stream's prompt tokens served from cache. */
const served = (s: RequestStream, share: number): HitCeiling => {
  const promptTokens = s.requests.reduce((sum, r) => sum + r.promptTokens, 0)
  return { hitTokens: share * promptTokens, promptTokens, fraction: share, blockFraction: share }
}
const cost = createStepCostModel(l40s27bFp8)
const decodeMs = (batch: number, context: number) =>
  cost.stepMs({
    tokens: batch,
    decodeContext: batch * context,
    prefillContext: 0,
    prefillAttention: 0,
  })

/** A cold 4,096-token prefill in two 2,048-token steps, the second attending to the first. */
const twoChunksSeconds = () =>
  (cost.stepMs({
    tokens: 2048,
    decodeContext: 0,
    prefillContext: 2048,
    prefillAttention: 2048 ** 2 / 2,
  }) +
    cost.stepMs({
      tokens: 2048,
      decodeContext: 0,
      prefillContext: 4096,
      prefillAttention: 2048 * 3072,
    })) /
  1000

describe('fluidThroughputBound', () => {
  it('is the prefill rate over the uncached tokens when nothing is decoded', () => {
    const s = uniform(4096, 1)
    const bound = fluidThroughputBound(s, served(s, 0), l40s27bFp8, 3)
    const rPeak =
      (2048 * 1000) /
      cost.stepMs({
        tokens: 2048,
        decodeContext: 0,
        prefillContext: 2048,
        prefillAttention: 2048 ** 2 / 2,
      })
    expect(bound.prefillTokensPerSecond).toBeCloseTo(rPeak, 9)
    expect(bound.binding).toBe('prefill')
    // Two chunks of 2048: the second attends to the first, so below 3 · R_peak / 4096.
    const chunks = twoChunksSeconds()
    expect(bound.requestsPerSecond).toBeCloseTo(3 / chunks, 9)
    expect(bound.requestsPerSecond).toBeLessThan((3 * rPeak) / 4096)
    expect(bound.terms.decode).toBe(Number.POSITIVE_INFINITY)
  })

  it('rises as the cache serves more of each prompt, though cached tokens are still attended to', () => {
    const s = uniform(4096, 1)
    const cold = fluidThroughputBound(s, served(s, 0), l40s27bFp8, 3)
    const hits = { ...served(s, 0.75), hitBlocksByRequest: s.requests.map(() => 3072 / 16) }
    const warm = fluidThroughputBound(s, hits, l40s27bFp8, 3)
    expect(warm.meanUncachedTokens).toBe(1024)
    expect(warm.terms.prefill).toBeGreaterThan(2.5 * cold.terms.prefill)
    expect(warm.terms.prefill).toBeLessThan(4 * cold.terms.prefill)
  })

  it('reads each request’s own hits when the capacity ceiling gives them', () => {
    // Half the requests fully cold, half 3/4 cached: the same mean as 3/8 cached each.
    const s = uniform(4096, 1, 2)
    const mixed = { ...served(s, 0.375), hitBlocksByRequest: [0, 192] }
    const perRequest = fluidThroughputBound(s, mixed, l40s27bFp8, 3)
    const averaged = fluidThroughputBound(s, served(s, 0.375), l40s27bFp8, 3)
    expect(perRequest.meanUncachedTokens).toBe(averaged.meanUncachedTokens)
    // Without them the cached context is left out, which only lowers the time: a looser bound.
    expect(perRequest.terms.prefill).toBeLessThan(averaged.terms.prefill)
    const cold =
      (cost.stepMs({
        tokens: 2048,
        decodeContext: 0,
        prefillContext: 1280 + 1024,
        prefillAttention: 2048 * 1280,
      }) *
        2560) /
      2048 /
      1000
    expect(averaged.terms.prefill).toBeCloseTo(3 / cold, 9)
  })

  it('is bound by decode for long answers: a full pod’s decode rate over the tokens to decode', () => {
    const s = uniform(250, 8000)
    const bound = fluidThroughputBound(s, served(s, 0), l40s27bFp8, 3)
    // KV for 5,888 blocks ÷ 8250/16 = 515.6 blocks each: ~11.4 requests a pod.
    expect(bound.kvConcurrency).toBeCloseTo(5888 / (8250 / 16), 9)
    const perPod = (bound.kvConcurrency * 1000) / decodeMs(bound.kvConcurrency, 250 + 4000)
    expect(bound.terms.decode).toBeCloseTo((3 * perPod) / 7999, 9)
    expect(bound.loose).toBe(bound.terms.decode)
    // The decode term counts each request's peak KV (8,250 tokens) against the batch;
    // `steps` counts what it holds on average over its decodes (250 + 4,000), so it allows
    // twice the batch and does not bind here.
    expect(bound.binding).toBe('decode')
    expect(bound.requestsPerSecond).toBe(bound.terms.decode)
    expect(bound.terms.steps).toBeGreaterThan(bound.terms.decode)
  })

  it('is bound by KV when few requests fit and each holds it through a long prefill', () => {
    // Room for two 4,160-token requests per pod.
    const tight = { ...l40s27bFp8, kvCacheBytes: 2 * 260 * 16 * 131_072 }
    const s = uniform(4096, 64)
    const bound = fluidThroughputBound(s, served(s, 0), tight, 3)
    expect(bound.kvConcurrency).toBe(2)
    expect(bound.binding).toBe('kv')
    const prefill = twoChunksSeconds()
    const service = prefill + (63 * decodeMs(1, 4096 + 32)) / 1000
    expect(bound.meanServiceSeconds).toBeCloseTo(service, 9)
    expect(bound.requestsPerSecond).toBeCloseTo((3 * 2) / service, 9)
  })

  it('scales with the pods, and the H200 profile serves more than the L40S one', () => {
    const s = uniform(1024, 350)
    const one = fluidThroughputBound(s, served(s, 0), l40s27bFp8, 1)
    const four = fluidThroughputBound(s, served(s, 0), l40s27bFp8, 4)
    expect(four.requestsPerSecond).toBeCloseTo(4 * one.requestsPerSecond, 9)
    const h200 = fluidThroughputBound(s, served(s, 0), h200x32bFp8, 1)
    expect(h200.requestsPerSecond).toBeGreaterThan(2 * one.requestsPerSecond)
    expect(h200.kvConcurrency).toBeCloseTo(Math.min(1024, 45_495 / ((1024 + 350) / 16)), 9)
  })

  it('counts only what a request computes itself against KV: cached prefixes are shared', () => {
    // 4,352-token prompts of which 4,096 are served from cache, 256 out: 512 tokens each.
    const s = uniform(4352, 256)
    const cold = fluidThroughputBound(s, served(s, 0), l40s27bFp8, 3)
    const warm = fluidThroughputBound(s, served(s, 4096 / 4352), l40s27bFp8, 3)
    expect(cold.kvConcurrency).toBeCloseTo(5888 / (4608 / 16), 9)
    expect(warm.kvConcurrency).toBeCloseTo(5888 / (512 / 16), 9)
    expect(warm.requestsPerSecond).toBeGreaterThan(1.5 * cold.requestsPerSecond)
  })
})
