/** GuideLLM's percentile keys and the quantiles they stand for. */
export const percentileKeys = {
  p001: 0.001,
  p01: 0.01,
  p05: 0.05,
  p10: 0.1,
  p25: 0.25,
  p50: 0.5,
  p75: 0.75,
  p90: 0.9,
  p95: 0.95,
  p99: 0.99,
  p999: 0.999,
} as const

export type Percentiles = Record<keyof typeof percentileKeys, number>

/** GuideLLM's DistributionSummary (without its optional pdf). */
export interface DistributionSummary {
  mean: number
  median: number
  mode: number
  variance: number
  std_dev: number
  min: number
  max: number
  count: number
  total_sum: number
  percentiles: Percentiles
}

/** A value and its weight (1 for plain samples; a duration for time-weighted ones). */
export type Weighted = readonly [value: number, weight: number]

/** A timestamp (seconds) and how many events (requests, tokens) happened at it. */
export type Occurrence = readonly [time: number, count: number]

/** GuideLLM merges events closer than this (seconds: a tenth of a millisecond). */
const mergeThreshold = 1e-4
const epsilon = 1e-6

const emptySummary = (count: number): DistributionSummary => ({
  mean: 0,
  median: 0,
  mode: 0,
  variance: 0,
  std_dev: 0,
  min: 0,
  max: 0,
  count,
  total_sum: 0,
  percentiles: quantilesOf([], true),
})

/**
 * The q-quantile by the inverted CDF (Hyndman & Fan type 1): the smallest value whose
 * cumulative weight reaches q of the total. This is GuideLLM's definition (it looks q up
 * in the cumulative probabilities with `searchsorted(side="left")`), and it is exactly
 * numpy's `np.quantile(values, q, method="inverted_cdf")`, with `weights=` when weighted:
 * unit weights use numpy's index formula `ceil(n·q) − 1`, other weights numpy's
 * normalised cumulative sum. `sorted` must be sorted by value.
 */
export function quantileOf(sorted: readonly Weighted[], q: number, unitWeights: boolean): number {
  return quantileIn(sorted, q, unitWeights ? null : cumulativeShares(sorted))
}

/** numpy's weighted CDF: the cumulative weights divided by their total. */
function cumulativeShares(sorted: readonly Weighted[]): Float64Array {
  const cdf = new Float64Array(sorted.length)
  let cumulative = 0
  sorted.forEach(([, weight], i) => {
    cumulative += weight
    cdf[i] = cumulative
  })
  for (let i = 0; i < cdf.length; i++) cdf[i] = (cdf[i] as number) / cumulative
  return cdf
}

function quantileIn(sorted: readonly Weighted[], q: number, cdf: Float64Array | null): number {
  const n = sorted.length
  if (n === 0) return 0
  let index: number
  if (cdf === null) {
    const virtual = n * q - 1
    const previous = Math.floor(virtual)
    index = virtual - previous === 0 ? previous : previous + 1
  } else {
    // searchsorted(cdf, q, side="left"): the first share ≥ q.
    let low = 0
    let high = n
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((cdf[middle] as number) < q) low = middle + 1
      else high = middle
    }
    index = low
  }
  return sorted[Math.min(n - 1, Math.max(0, index))]?.[0] ?? 0
}

function quantilesOf(sorted: readonly Weighted[], unitWeights: boolean): Percentiles {
  const cdf = unitWeights ? null : cumulativeShares(sorted)
  const out = {} as Percentiles
  for (const [key, q] of Object.entries(percentileKeys)) {
    out[key as keyof Percentiles] = quantileIn(sorted, q, cdf)
  }
  return out
}

/**
 * GuideLLM's `DistributionSummary.from_values`: values with optional weights (zero-weight
 * values dropped), mean and population variance weighted, mode the value of greatest
 * total weight (the smallest on a tie), median the p50, count the rounded sum of weights
 * unless given, total_sum = mean × count.
 */
export function summarizeDistribution(
  samples: readonly (number | Weighted)[],
  count?: number,
): DistributionSummary {
  const pairs: Weighted[] = []
  let unit = true
  let weightSum = 0
  for (const sample of samples) {
    const pair: Weighted = typeof sample === 'number' ? [sample, 1] : sample
    weightSum += pair[1]
    if (pair[1] <= 0) continue
    if (pair[1] !== 1) unit = false
    pairs.push(pair)
  }
  const n = count ?? Math.round(weightSum)
  if (pairs.length === 0) return emptySummary(n)
  pairs.sort((a, b) => a[0] - b[0])
  let total = 0
  let weighted = 0
  for (const [value, weight] of pairs) {
    total += weight
    weighted += value * weight
  }
  const mean = weighted / total
  let squares = 0
  let mode = pairs[0]?.[0] ?? 0
  let modeWeight = 0
  for (let i = 0; i < pairs.length; ) {
    const value = pairs[i]?.[0] ?? 0
    let run = 0
    for (; i < pairs.length && pairs[i]?.[0] === value; i++) {
      const weight = pairs[i]?.[1] ?? 0
      run += weight
      squares += (value - mean) ** 2 * weight
    }
    if (run > modeWeight) {
      mode = value
      modeWeight = run
    }
  }
  const variance = squares / total
  const percentiles = quantilesOf(pairs, unit)
  return {
    mean,
    median: percentiles.p50,
    mode,
    variance,
    std_dev: Math.sqrt(variance),
    min: pairs[0]?.[0] ?? 0,
    max: pairs[pairs.length - 1]?.[0] ?? 0,
    count: n,
    total_sum: mean * n,
    percentiles,
  }
}

/** Sorted (time, weight) pairs with times closer than the threshold merged into the first. */
function mergeTimes(events: readonly Occurrence[]): Occurrence[] {
  // Equal times first (a simulated step stamps a whole batch's tokens alike): sorting
  // the distinct times is then far cheaper than sorting every event.
  const sums = new Map<number, number>()
  for (const [time, weight] of events) sums.set(time, (sums.get(time) ?? 0) + weight)
  const times = Float64Array.from(sums.keys()).sort()
  const merged: [number, number][] = []
  for (const time of times) {
    const weight = sums.get(time) as number
    const last = merged[merged.length - 1]
    if (last && time - last[0] <= mergeThreshold) last[1] += weight
    else merged.push([time, weight])
  }
  return merged
}

/**
 * GuideLLM's `rate_distribution_from_timings`: events inside [start, end] plus empty
 * events at both ends, nearby events merged; each event owns the time from the midpoint
 * with its predecessor to the midpoint with its successor (the ends half an interval),
 * and its rate is its count over that duration, weighted by the duration. The mean is
 * then the total count over the window. Times in seconds.
 */
export function summarizeRate(
  events: readonly Occurrence[],
  start: number,
  end: number,
): DistributionSummary {
  const inside = events.filter(([time]) => time >= start && time <= end)
  const times = mergeTimes([[start, 0], ...inside, [end, 0]])
  if (times.length <= 1) return summarizeDistribution([], times.length)
  let occurrences = 0
  const samples: Weighted[] = []
  for (let i = 0; i < times.length; i++) {
    const [time, count] = times[i] as Occurrence
    const previous = times[i - 1]?.[0]
    const next = times[i + 1]?.[0]
    const from = previous === undefined ? time : (previous + time) / 2
    const to = next === undefined ? time : (time + next) / 2
    const duration = next === undefined ? Math.max(to - from, epsilon) : to - from
    occurrences += count
    samples.push([count / duration, duration])
  }
  return summarizeDistribution(samples, Math.round(occurrences))
}

/**
 * GuideLLM's `concurrency_distribution_from_timings`: the number of intervals in flight,
 * weighted by how long it held, over [start, end]. Times in seconds.
 */
export function summarizeConcurrency(
  intervals: readonly (readonly [start: number, end: number])[],
  start: number,
  end: number,
): DistributionSummary {
  const kept = intervals.filter(([from, to]) => to >= start && from <= end)
  if (kept.length === 0) return summarizeDistribution([], 0)
  const changes = mergeTimes(
    kept.flatMap(([from, to]): Occurrence[] => [
      [from, 1],
      [to, -1],
    ]),
  )
  let before = 0
  const inside: Occurrence[] = []
  for (const change of changes) {
    if (change[0] < start) before += change[1]
    else if (change[0] <= end) inside.push(change)
  }
  const points: Occurrence[] = [[start, before], ...inside, [end, 0]]
  const samples: Weighted[] = []
  let level = 0
  for (let i = 0; i < points.length - 1; i++) {
    const [time, delta] = points[i] as Occurrence
    level += delta
    const duration = Math.max(0, (points[i + 1] as Occurrence)[0] - time)
    samples.push([Math.max(0, level), duration])
  }
  return samples.some(([, duration]) => duration > 0)
    ? summarizeDistribution(samples, kept.length)
    : summarizeDistribution([], kept.length)
}
