import { describe, expect, it } from 'vitest'
import { sharedStepWork } from '../../../../../control-plane/lab/bench/bounds/shared-step-work.ts'
import { l40s27bFp8 } from '../../../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../../../../shared/gpu/step-cost-model.ts'

const cost = createStepCostModel(l40s27bFp8)
/** Budget 2,048; `seqs` sequences and KV for `kv` tokens (plenty unless given). */
const limits = (maxNumSeqs = 100, kvTokens = 1e9) => ({ budget: 2048, maxNumSeqs, kvTokens })
const step = (tokens: number, decodeContext = 0, prefillContext = 0, prefillAttention = 0) =>
  cost.stepMs({ tokens, decodeContext, prefillContext, prefillAttention })

describe('sharedStepWork', () => {
  it('is a prefill in full-budget steps when nothing is decoded', () => {
    // 4,096 tokens after 1,024 cached, one output token: two 2,048-token chunks.
    const work = sharedStepWork(
      [{ cachedTokens: 1024, uncachedTokens: 4096, outputTokens: 1 }],
      cost,
      limits(),
    )
    const chunks =
      step(2048, 0, 1024 + 2048, 2048 * (1024 + 1024)) +
      step(2048, 0, 1024 + 4096, 2048 * (1024 + 3072))
    expect(work.stepsPerRequest).toBe(2)
    expect(work.secondsPerRequest).toBeCloseTo(chunks / 1000, 12)
  })

  it('is decodes in batches of the decode limit when there is little prefill', () => {
    // 8 requests of 1 prompt token, 101 out, 4 decodes a step: 200 steps of 4 tokens.
    const requests = Array.from({ length: 8 }, () => ({
      cachedTokens: 0,
      uncachedTokens: 0,
      outputTokens: 101,
    }))
    const work = sharedStepWork(requests, cost, limits(4))
    expect(work.stepsPerRequest).toBe(25)
    // Each request reads its context 1 … 100 once; a step of 4 decodes costs step(4) plus that.
    const contextMs = step(0, 5050) - step(0)
    expect(work.secondsPerRequest).toBeCloseTo((25 * step(4) + contextMs) / 1000, 12)
  })

  it('limits the batch by the KV the decoding requests hold on average, not at their peak', () => {
    // 1,000 uncached + 1,001 out: over its decodes a request holds 1,000 + 500.5 tokens on
    // average, so KV for 15,005 tokens decodes 10 at once (the peak, 2,000, would allow 7.5).
    const requests = [{ cachedTokens: 0, uncachedTokens: 1000, outputTokens: 1001 }]
    const work = sharedStepWork(requests, cost, limits(1000, 15_005))
    expect(work.stepsPerRequest).toBeCloseTo(1000 / 10, 9)
    // The cached prefix is shared, so it is not counted against the KV.
    const cached = sharedStepWork(
      [{ cachedTokens: 8000, uncachedTokens: 1000, outputTokens: 1001 }],
      cost,
      limits(1000, 15_005),
    )
    expect(cached.stepsPerRequest).toBeCloseTo(100, 9)
  })

  it('costs more than the prefill alone and the decodes alone when both share the steps', () => {
    const one = { cachedTokens: 4096, uncachedTokens: 256, outputTokens: 256 }
    const mixed = [one]
    const both = sharedStepWork(mixed, cost, limits(120)).secondsPerRequest
    const prefill = sharedStepWork([{ ...one, outputTokens: 1 }], cost, limits(120))
    const decode = sharedStepWork([{ ...one, uncachedTokens: 0 }], cost, limits(120))
    expect(both).toBeGreaterThan(prefill.secondsPerRequest)
    expect(both).toBeGreaterThan(decode.secondsPerRequest)
    // The decode batch's fixed and weight costs come first: the prefill adds its tokens.
    expect(both).toBeLessThan(prefill.secondsPerRequest + decode.secondsPerRequest)
  })

  it('spreads the tokens over the fewest steps: any other split costs more (convex step cost)', () => {
    const requests = [{ cachedTokens: 0, uncachedTokens: 3000, outputTokens: 1 }]
    const work = sharedStepWork(requests, cost, limits())
    // Two chunks of 1,500 or 2,048 + 952: area is the same, context and step count at least as large.
    const even = step(1500, 0, 1500, 1500 * 750) + step(1500, 0, 3000, 1500 * 2250)
    const uneven = step(2048, 0, 2048, 2048 * 1024) + step(952, 0, 3000, 952 * (2048 + 476))
    expect(work.secondsPerRequest * 1000).toBeLessThanOrEqual(even)
    expect(work.secondsPerRequest * 1000).toBeLessThanOrEqual(uneven)
  })
})
