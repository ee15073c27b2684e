import { describe, expect, it } from 'vitest'
import {
  GpuProfile,
  gpuProfiles,
  h200x32bFp8,
  kvBytesPerToken,
  l40s27bFp8,
  numGpuBlocks,
} from '../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../../shared/gpu/step-cost-model.ts'

const GiB = 1024 ** 3

describe('the shipped GPU profiles', () => {
  it('are valid and registered under their names', () => {
    for (const profile of [l40s27bFp8, h200x32bFp8]) {
      expect(GpuProfile.parse(profile)).toEqual(profile)
      expect(gpuProfiles[profile.name]).toBe(profile)
    }
  })
})

describe('h200-32b-fp8', () => {
  const profile = h200x32bFp8
  const cost = createStepCostModel(profile)

  it('has the Qwen3-32B geometry with an FP8 KV cache', () => {
    // 64 query heads of 128 attend; K and V are 8 heads of 128, 1 byte each, 64 layers.
    expect(profile.model.attentionWidth).toBe(8192)
    expect(kvBytesPerToken(profile)).toBe(131_072)
    expect(profile.model.maxModelLen).toBe(131_072)
  })

  it('keeps ~89 GiB of KV cache: ~728k tokens, five and a half full contexts', () => {
    expect(profile.kvCacheBytes / GiB).toBeCloseTo(88.86, 2)
    expect(numGpuBlocks(profile)).toBe(45_495)
    const fullContexts = (numGpuBlocks(profile) * profile.blockSize) / profile.model.maxModelLen
    expect(fullContexts).toBeGreaterThan(5)
    expect(fullContexts).toBeLessThan(6)
  })

  it("takes vLLM's large-GPU scheduler defaults, the L40S the small-GPU ones", () => {
    expect(profile.scheduler).toEqual({ maxNumBatchedTokens: 8192, maxNumSeqs: 1024 })
    expect(l40s27bFp8.scheduler).toEqual({ maxNumBatchedTokens: 2048, maxNumSeqs: 256 })
  })

  it('is memory-bound for a decode step and compute-bound for a budget-sized prefill', () => {
    const decode = cost.stepMs({
      tokens: 1,
      decodeContext: 2048,
      prefillContext: 0,
      prefillAttention: 0,
    })
    // Streaming 32.8 GB at 0.8 × 4.8 TB/s, plus the 3 ms fixed cost.
    expect(decode).toBeGreaterThan(3 + (32.76e9 / 3.84e12) * 1000)
    expect(decode).toBeLessThan(12)
    const budget = profile.scheduler.maxNumBatchedTokens
    const prefill = cost.stepMs({
      tokens: budget,
      decodeContext: 0,
      prefillContext: budget,
      prefillAttention: (budget * budget) / 2,
    })
    // 2.7× the L40S's FP8 peak, but at 0.29 of the attention peak and with 4× longer
    // chunks: about 1.65× its prefill rate.
    const l40s = createStepCostModel(l40s27bFp8).stepMs({
      tokens: 2048,
      decodeContext: 0,
      prefillContext: 2048,
      prefillAttention: 2048 ** 2 / 2,
    })
    expect(budget / prefill).toBeGreaterThan(1.5 * (2048 / l40s))
  })
})
