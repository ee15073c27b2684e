import { describe, expect, it } from 'vitest'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { l40s27bFp8, numGpuBlocks } from '../../../shared/gpu/gpu-profile.ts'
import {
  admissionQueueOptions,
  kinferenceParametersOf,
  kvCapacityOf,
  routerSettings,
  stepCostOf,
  ttftPrior,
} from '../../../shared/routing/pool-options.ts'
import { KinferenceParameters } from '../../../shared/routing/strategies/create-kinference-strategy.ts'

const spec = (extra: object = {}) =>
  InferencePoolSpec.parse({
    selector: { matchLabels: {} },
    targetPort: 8000,
    models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
    gpuProfile: 'l40s-27b-fp8',
    ...extra,
  })

describe('pool options', () => {
  it('takes the kinference defaults from their schema when the pool sets no block', () => {
    const roundRobin = spec({ routing: { strategy: 'round-robin' } })
    expect(kinferenceParametersOf(roundRobin)).toEqual(KinferenceParameters.parse({}))
    expect(admissionQueueOptions(roundRobin).enabled).toBe(false)
    expect(routerSettings(roundRobin).strategy.name).toBe('round-robin')
    const holding = spec({ routing: { kinference: { lateBinding: true, maxHoldMs: 1_234 } } })
    expect(admissionQueueOptions(holding)).toMatchObject({ enabled: true, maxHoldMs: 1_234 })
    expect(routerSettings(holding).admission).toEqual(admissionQueueOptions(holding))
  })

  it('derives the TTFT prior, step cost and KV capacity from the GPU profile', () => {
    const pool = spec()
    const prior = ttftPrior(pool)
    // One L40S with a 27B FP8 model: a decode step of tens of ms; prefill about 0.1-0.2 ms a token.
    expect(prior.overheadMs).toBeGreaterThan(30)
    expect(prior.overheadMs).toBeLessThan(60)
    expect(prior.msPerToken).toBeGreaterThan(0.1)
    expect(prior.msPerToken).toBeLessThan(0.2)
    expect(stepCostOf(pool).decodeStepMs).toBeGreaterThan(30)
    expect(kvCapacityOf(pool)).toBe(numGpuBlocks(l40s27bFp8) * 16)
    expect(kvCapacityOf(spec({ scheduler: { numGpuBlocks: 100 } }))).toBe(1_600)
  })

  it('lets the pool override the prior, and falls back to a generic GPU for an unknown profile', () => {
    const tuned = spec({
      routing: { kinference: { prefillTokensPerSecond: 10_000, overheadMs: 5 } },
    })
    expect(ttftPrior(tuned)).toEqual({ overheadMs: 5, msPerToken: 0.1 })
    const unknown = spec({ gpuProfile: 'h100-70b' })
    expect(kvCapacityOf(unknown)).toBeNull()
    expect(ttftPrior(unknown).msPerToken).toBeGreaterThan(0)
  })
})
