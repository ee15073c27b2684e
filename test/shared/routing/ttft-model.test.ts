import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import type { PodLoad, PodMetricsView } from '../../../shared/routing/routing-strategy.ts'
import { effectiveWork, OnlineTtftModel, ttftFeatures } from '../../../shared/routing/ttft-model.ts'
import { pod, request } from './strategies/routing-fixtures.ts'

describe('OnlineTtftModel', () => {
  it('converges from a wrong prior to the pod’s real constants', () => {
    const random = createSeededRandom(1)
    const model = new OnlineTtftModel({
      prior: { overheadMs: 40, msPerToken: 0.15 },
      forgettingFactor: 0.98,
    })
    // The pod is twice as slow per token as described, with a 90 ms overhead and noise.
    for (let i = 0; i < 400; i++) {
      const work = random() * 16_000
      model.observe(work, 90 + 0.3 * work + (random() - 0.5) * 20)
    }
    expect(model.model.msPerToken).toBeCloseTo(0.3, 2)
    expect(model.model.overheadMs).toBeGreaterThan(70)
    expect(model.model.overheadMs).toBeLessThan(110)
  })

  it('follows a pod that changes (forgetting), and ignores garbage', () => {
    const model = new OnlineTtftModel({
      prior: { overheadMs: 40, msPerToken: 0.15 },
      forgettingFactor: 0.95,
    })
    const random = createSeededRandom(2)
    for (let i = 0; i < 200; i++) {
      const work = 1000 + random() * 8000
      model.observe(work, 40 + 0.15 * work)
    }
    for (let i = 0; i < 200; i++) {
      const work = 1000 + random() * 8000
      model.observe(work, 40 + 0.6 * work)
    }
    expect(model.model.msPerToken).toBeCloseTo(0.6, 1)
    const before = model.model
    model.observe(Number.NaN, 5)
    model.observe(100, -3)
    expect(model.model).toEqual(before)
  })

  it('keeps its parameters within a factor of 50 of the prior whatever it is told', () => {
    const model = new OnlineTtftModel({
      prior: { overheadMs: 40, msPerToken: 0.15 },
      forgettingFactor: 0.9,
    })
    for (let i = 0; i < 100; i++) model.observe(10_000, 1e9)
    expect(model.model.msPerToken).toBeLessThanOrEqual(0.15 * 50)
    expect(model.model.overheadMs).toBeLessThanOrEqual(40 * 50)
  })
})

describe('OnlineTtftModel options', () => {
  it('trusts the prior as 2 observations unless told otherwise, and refuses a weight <= 0', () => {
    const prior = { overheadMs: 40, msPerToken: 0.15 }
    const fitted = (priorWeight?: number) => {
      const model = new OnlineTtftModel({
        prior,
        forgettingFactor: 0.98,
        ...(priorWeight === undefined ? {} : { priorWeight }),
      })
      model.observe(1000, 500)
      return model.model
    }
    expect(fitted()).toEqual(fitted(2))
    expect(fitted(20)).not.toEqual(fitted(2))
    expect(() => new OnlineTtftModel({ prior, forgettingFactor: 0.98, priorWeight: 0 })).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: 'ttft model: priorWeight must be a number > 0',
      }),
    )
  })
})

describe('effectiveWork', () => {
  it('grows as running decodes take the step budget', () => {
    const base = { queuedTokens: 3000, uncachedTokens: 1000, stepBudget: 2048 }
    expect(effectiveWork({ ...base, decoding: 0 })).toBe(4000)
    expect(effectiveWork({ ...base, decoding: 1024 })).toBe(8000)
    // Decodes never take the whole budget in the model (a chunk is always admitted).
    expect(effectiveWork({ ...base, decoding: 5000 })).toBe(32_000)
  })
})

describe('ttftFeatures: the queue ahead', () => {
  const hit = request({ promptTokens: 4352 })
  const warm = (load: Partial<PodLoad>, metrics: PodMetricsView) =>
    pod('a', { cachedBlocks: 256, load, metrics })

  it("counts this replica's preempted requests at the size of its requests in flight", () => {
    // Sole sender: three of its five requests in flight wait again, preempted.
    const a = warm(
      { inFlight: 5, pendingRequests: 0, activeTokens: 5 * 4400 },
      {
        running: 2,
        waiting: 3,
        kvCacheUsage: 0.9,
        ageMs: 20,
        unseenWaiting: 3,
        foreignRequests: 0,
      },
    )
    expect(ttftFeatures(hit, a, 2048).queuedTokens).toBe(3 * 4400)
  })

  it("sizes another replica's waiting request like this one there, at most like its own pending", () => {
    // One cold placement of its own is pending; four requests of other replicas wait.
    const metrics = {
      running: 0,
      waiting: 5,
      kvCacheUsage: 0.3,
      ageMs: 20,
      unseenWaiting: 4,
      foreignRequests: 4,
    }
    const load = { inFlight: 1, pendingRequests: 1, pendingPrefillTokens: 4352, activeTokens: 4352 }
    // A hit there needs 256 tokens, so do theirs; not 4 × 4352.
    expect(ttftFeatures(hit, warm(load, metrics), 2048).queuedTokens).toBe(4352 + 4 * 256)
    // A cold pod: theirs as its own pending ones, not as this request's whole prompt.
    const own = { ...load, pendingPrefillTokens: 2 * 300, pendingRequests: 2, inFlight: 2 }
    const cold = pod('b', { load: own, metrics: { ...metrics, waiting: 6 } })
    expect(ttftFeatures(hit, cold, 2048).queuedTokens).toBe(600 + 4 * 300)
  })
})
