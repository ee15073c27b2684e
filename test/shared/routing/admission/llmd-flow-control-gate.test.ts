import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import {
  createLlmdFlowControlGate,
  LlmdFlowControlOptions,
} from '../../../../shared/routing/admission/llmd-flow-control-gate.ts'
import type { PodCandidate } from '../../../../shared/routing/routing-strategy.ts'
import { draw, pod, request, routeOf, scraped } from './admission-fixtures.ts'

const hard = createLlmdFlowControlGate()
const verdict = (candidates: PodCandidate[], random = draw(0.5)) =>
  hard.admit(routeOf(candidates), request(), 0, random)

describe('llm-d flow control (hard, the default)', () => {
  it('defaults to the thresholds llm-d-router ships: queue 5, KV 0.8, stale after 200 ms', () => {
    expect(LlmdFlowControlOptions.parse({})).toEqual({
      queueDepthThreshold: 5,
      kvCacheUtilThreshold: 0.8,
      metricsStalenessMs: 200,
      mode: 'hard',
      power: 5,
      k: 300,
      priority: -1,
    })
    expect(hard.name).toBe('llm-d flow control')
  })

  it('admits while the pool mean of max(waiting / 5, KV / 0.8) stays below 1', () => {
    // Scores 1.2, 0 and 0.8: one pod over, mean 0.67.
    const pods = [scraped('a', 6, 0.1), scraped('b', 0, 0), scraped('c', 4, 0.5)]
    expect(verdict(pods)).toEqual({ kind: 'admit' })
    expect(verdict([scraped('a', 4, 0.79), scraped('b', 4, 0.79)])).toEqual({ kind: 'admit' })
  })

  it('refuses with 429 when every pod is at a threshold (waiting 5 or KV 0.8 score exactly 1)', () => {
    const refused = verdict([scraped('a', 5, 0), scraped('b', 0, 0.8), scraped('c', 7, 0.9)])
    expect(refused).toMatchObject({ kind: 'refuse', status: 429, code: 'pool_saturated' })
    expect(refused).toMatchObject({ retryAfterSeconds: null })
  })

  it('sheds on the mean, not on whether some pod is free: one idle pod does not save two at 2×', () => {
    expect(verdict([scraped('a', 0, 0), scraped('b', 10, 0), scraped('c', 0, 1.6)])).toMatchObject({
      kind: 'refuse',
      status: 429,
    })
  })

  it('fails closed on missing and stale metrics: each scores 1, and an empty pool is saturated', () => {
    expect(verdict([pod('a', { metrics: null }), pod('b', { metrics: null })])).toMatchObject({
      kind: 'refuse',
    })
    expect(verdict([scraped('a', 0, 0, 201), scraped('b', 0, 0, 201)])).toMatchObject({
      kind: 'refuse',
    })
    expect(verdict([scraped('a', 0, 0, 200), scraped('b', 0, 0, 200)])).toEqual({ kind: 'admit' })
    // One stale pod (1) and one idle (0): mean 0.5.
    expect(verdict([scraped('a', 0, 0, 5_000), scraped('b', 0, 0)])).toEqual({ kind: 'admit' })
    // ... but with the other at 0.8 the mean reaches 1 (0.5 alone would not).
    expect(verdict([pod('a', { metrics: null }), scraped('b', 5, 0)])).toMatchObject({
      kind: 'refuse',
    })
    expect(verdict([])).toMatchObject({ kind: 'refuse', status: 429 })
  })

  it('never sheds a request of priority 0 or above', () => {
    const critical = createLlmdFlowControlGate({ priority: 0 })
    const saturated = routeOf([scraped('a', 50, 1), pod('b', { metrics: null })])
    expect(critical.admit(saturated, request(), 0, draw(0))).toEqual({ kind: 'admit' })
  })

  it('takes other thresholds', () => {
    const loose = createLlmdFlowControlGate({ queueDepthThreshold: 10, kvCacheUtilThreshold: 0.95 })
    const pods = routeOf([scraped('a', 8, 0.9), scraped('b', 8, 0.9)])
    expect(loose.admit(pods, request(), 0, draw(0.5))).toEqual({ kind: 'admit' })
    expect(verdict([scraped('a', 8, 0.9), scraped('b', 8, 0.9)])).toMatchObject({ kind: 'refuse' })
  })
})

describe('llm-d probabilistic admitter', () => {
  const gate = createLlmdFlowControlGate({ mode: 'probabilistic' })
  /** Two pods whose mean score is `saturation` (both at it, by queue depth). */
  const at = (saturation: number) =>
    routeOf([scraped('a', saturation * 5, 0), scraped('b', saturation * 5, 0)])
  const admits = (saturation: number, random: () => number) =>
    gate.admit(at(saturation), request(), 0, random).kind === 'admit'

  it('sheds with probability min(saturation^5 × 300, 1): 9.6% at 0.2', () => {
    expect(gate.name).toBe('llm-d probabilistic admitter')
    expect(admits(0.2, draw(0.0959))).toBe(false)
    expect(admits(0.2, draw(0.0961))).toBe(true)
    expect(gate.admit(at(0.2), request(), 0, draw(0))).toMatchObject({
      kind: 'refuse',
      status: 429,
      code: 'probabilistic_shed',
    })
    // (1/300)^(1/5) ≈ 0.3195: everything past it is shed, whatever the draw.
    expect(admits(0.33, draw(0.999_999))).toBe(false)
    expect(admits(0.05, draw(0.001))).toBe(true)
  })

  it('is deterministic for a seeded random and sheds more as saturation rises', () => {
    const shedShare = (saturation: number, seed: number) => {
      const random = createSeededRandom(seed)
      let shed = 0
      for (let i = 0; i < 4_000; i++) if (!admits(saturation, random)) shed++
      return shed / 4_000
    }
    expect(shedShare(0.2, 7)).toBe(shedShare(0.2, 7))
    const shares = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35].map((saturation) => shedShare(saturation, 7))
    for (let i = 1; i < shares.length; i++)
      expect(shares[i]).toBeGreaterThan(shares[i - 1] as number)
    expect(shares[0]).toBeLessThan(0.01)
    expect(shares[2]).toBeCloseTo(0.096, 1)
    expect(shares[5]).toBe(1)
  })

  it('scores missing metrics 1 but reads stale ones as they are', () => {
    // Missing: 1 and 0, mean 0.5, probability 1.
    expect(
      gate.admit(
        routeOf([pod('a', { metrics: null }), scraped('b', 0, 0)]),
        request(),
        0,
        draw(0.99),
      ),
    ).toMatchObject({ kind: 'refuse', code: 'probabilistic_shed' })
    // Stale but idle: the admitter sees 0 (its shipped config's neutered gate sees only 0.5).
    const stale = routeOf([scraped('a', 0, 0, 60_000), scraped('b', 0, 0)])
    expect(gate.admit(stale, request(), 0, draw(0))).toEqual({ kind: 'admit' })
  })

  it('keeps the neutered saturation gate in front: no fresh metrics at all, or no pods, is 429', () => {
    const allStale = routeOf([scraped('a', 0, 0, 60_000), scraped('b', 0, 0, 60_000)])
    expect(gate.admit(allStale, request(), 0, draw(0.99))).toMatchObject({
      kind: 'refuse',
      status: 429,
      code: 'pool_saturated',
    })
    expect(gate.admit(routeOf([]), request(), 0, draw(0.99))).toMatchObject({
      code: 'pool_saturated',
    })
  })
})
