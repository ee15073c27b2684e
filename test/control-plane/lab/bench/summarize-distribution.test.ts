import { describe, expect, it } from 'vitest'
import {
  quantileOf,
  summarizeConcurrency,
  summarizeDistribution,
  summarizeRate,
} from '../../../../control-plane/lab/bench/summarize-distribution.ts'

const keys = [
  'p001',
  'p01',
  'p05',
  'p10',
  'p25',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'p999',
] as const
const qs = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999]
const percentilesOf = (summary: ReturnType<typeof summarizeDistribution>) =>
  keys.map((key) => summary.percentiles[key])

describe('percentiles: the inverted CDF, as numpy and GuideLLM compute it', () => {
  // Expected values printed by numpy 2.4.6:
  //   [float(np.quantile(a, q, method='inverted_cdf')) for q in qs]
  it('matches numpy on an unsorted sample with repeats', () => {
    const a = [12.5, 3, 7, 7, 1, 42, 18, 5, 9, 30, 2, 16, 7, 25, 11]
    const summary = summarizeDistribution(a)
    expect(percentilesOf(summary)).toEqual([1, 1, 1, 2, 5, 9, 18, 30, 42, 42, 42])
    expect(summary.median).toBe(9)
    // np.mean, np.var (population), np.std
    expect(summary.mean).toBeCloseTo(13.033333333333333, 12)
    expect(summary.variance).toBeCloseTo(124.34888888888894, 10)
    expect(summary.std_dev).toBeCloseTo(11.151183295457434, 12)
    expect(summary.mode).toBe(7)
    expect(summary).toMatchObject({ min: 1, max: 42, count: 15 })
    expect(summary.total_sum).toBeCloseTo(195.5, 10)
  })

  it('matches numpy on 1,000 values, where every percentile key is distinct', () => {
    const b = Array.from({ length: 1000 }, (_, i) => (i + 1) * 1.5)
    expect(percentilesOf(summarizeDistribution(b))).toEqual([
      1.5, 15, 75, 150, 375, 750, 1125, 1350, 1425, 1485, 1498.5,
    ])
  })

  it('takes the lower middle value as the median of an even sample (not the average)', () => {
    // numpy linear would say 2.5; inverted_cdf (GuideLLM) says 2.
    const summary = summarizeDistribution([4, 1, 3, 2])
    expect(percentilesOf(summary)).toEqual([1, 1, 1, 1, 1, 2, 3, 4, 4, 4, 4])
    expect(summary.median).toBe(2)
  })

  it('matches numpy with weights (np.quantile(..., method="inverted_cdf", weights=w))', () => {
    const x = [3, 1, 4, 1, 5, 9, 2, 6]
    const w = [1, 2, 1, 1, 3, 1, 2, 1]
    const summary = summarizeDistribution(x.map((value, i) => [value, w[i] as number] as const))
    expect(percentilesOf(summary)).toEqual([1, 1, 1, 1, 1, 3, 5, 6, 9, 9, 9])
    expect(summary.count).toBe(12)
    // The value with the most weight: 1 (2 + 1) and 5 (3) tie; the smaller wins.
    expect(summary.mode).toBe(1)

    const fractional = summarizeDistribution([
      [0.5, 0.3],
      [2, 0.1],
      [1.25, 0.45],
      [4, 0.15],
    ])
    expect(percentilesOf(fractional)).toEqual([0.5, 0.5, 0.5, 0.5, 0.5, 1.25, 1.25, 4, 4, 4, 4])
    // np.average(x, weights=w) and the weighted population variance
    expect(fractional.mean).toBeCloseTo(1.5125, 12)
    expect(fractional.variance).toBeCloseTo(1.29046875, 12)
    expect(fractional.count).toBe(1)
  })

  it('quantileOf uses ceil(n·q) − 1 for unit weights, clamped to the sample', () => {
    const sorted = [10, 20, 30, 40, 50].map((v) => [v, 1] as const)
    expect(qs.map((q) => quantileOf(sorted, q, true))).toEqual([
      10, 10, 10, 10, 20, 30, 40, 50, 50, 50, 50,
    ])
    expect(quantileOf(sorted, 0, true)).toBe(10)
    expect(quantileOf(sorted, 1, true)).toBe(50)
    expect(quantileOf([], 0.5, true)).toBe(0)
  })

  it('gives zeros for an empty sample, and drops zero-weight values', () => {
    expect(summarizeDistribution([])).toMatchObject({ mean: 0, median: 0, count: 0, max: 0 })
    expect(summarizeDistribution([[5, 0]])).toMatchObject({ mean: 0, count: 0 })
    expect(summarizeDistribution([[5, 0], 7]).mean).toBe(7)
  })
})

describe('time-weighted distributions (GuideLLM statistics.py)', () => {
  it('rate: each event owns the time between the midpoints with its neighbours', () => {
    // Completions at 1.5, 3 and 5 s in the window [1, 5]. With the empty event at 1 s
    // the owned durations are 0.25, 1, 1.75 and 1 s (the end event merges with the last
    // completion), so the rates are 0, 1, 1/1.75 and 1, weighted by those durations.
    const rate = summarizeRate(
      [
        [1.5, 1],
        [3, 1],
        [5, 1],
      ],
      1,
      5,
    )
    expect(rate.mean).toBeCloseTo(0.75, 12) // 3 requests over 4 s
    expect(rate.median).toBeCloseTo(1 / 1.75, 12)
    expect(rate.mode).toBe(1)
    expect(rate.min).toBe(0)
    expect(rate.max).toBe(1)
    expect(rate.count).toBe(3)
    expect(rate.variance).toBeCloseTo(0.32142857142857145 / 4, 12)
    expect(rate.percentiles.p001).toBe(0)
    expect(rate.percentiles.p10).toBeCloseTo(1 / 1.75, 12)
  })

  it('rate: merges events closer than 0.1 ms and ignores events outside the window', () => {
    const rate = summarizeRate(
      [
        [2, 1],
        [2.00005, 1],
        [0.5, 10],
        [9, 10],
      ],
      1,
      3,
    )
    expect(rate.count).toBe(2)
    expect(rate.mean).toBeCloseTo(1, 12) // 2 events over 2 s
    expect(rate.max).toBeCloseTo(2, 12) // both at 2 s, owning 1 s
  })

  it('concurrency: requests in flight, weighted by how long each level held', () => {
    const concurrency = summarizeConcurrency(
      [
        [1, 1.5],
        [2, 3],
        [3, 5],
      ],
      1,
      5,
    )
    // Levels 1 (0.5 s), 0 (0.5 s), 1 (1 s), 1 (2 s): the mean is Σ latency / window.
    expect(concurrency.mean).toBeCloseTo(3.5 / 4, 12)
    expect(concurrency.median).toBe(1)
    expect(concurrency.percentiles.p10).toBe(0)
    expect(concurrency.count).toBe(3)
  })

  it('concurrency: counts requests already running when the window opens', () => {
    const concurrency = summarizeConcurrency(
      [
        [0, 4],
        [1, 2],
      ],
      1,
      3,
    )
    // [1, 2): 2 in flight; [2, 3]: 1.
    expect(concurrency.mean).toBeCloseTo(1.5, 12)
    expect(concurrency.max).toBe(2)
    expect(concurrency.min).toBe(1)
  })
})
