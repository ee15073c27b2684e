/** Nearest-rank percentiles of a set of durations, in ms. */
export interface LatencySummary {
  count: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  meanMs: number
}

/**
 * Nearest rank (the smallest value with at least q of the samples at or below it): with
 * 50 samples p99 is the largest, so a single slow change shows rather than interpolates.
 */
export function summarizeLatencies(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0
  const sum = sorted.reduce((total, value) => total + value, 0)
  return {
    count: sorted.length,
    p50Ms: rank(0.5),
    p99Ms: rank(0.99),
    maxMs: sorted[sorted.length - 1] ?? 0,
    meanMs: sorted.length === 0 ? 0 : sum / sorted.length,
  }
}
