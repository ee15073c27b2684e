import { computeBenchmarkMetrics, computePrefixCacheSummary } from '../compute-benchmark-metrics.ts'
import type { BenchmarkRun } from '../request-record.ts'
import { baselineStability, type Stability } from './baseline-stability.ts'

/** A figure over seeds: its mean, judged on, and its spread, shown beside it. */
export interface Spread {
  mean: number
  min: number
  max: number
}

/** What one router did at one rate of one workload, over every seed run there; seconds. */
export interface RatePoint {
  rate: number
  seeds: number[]
  ttftMedianS: Spread
  ttftP90S: Spread
  e2eMedianS: Spread
  /** Successful requests per second actually served: below the rate once the pool saturates. */
  achievedRps: Spread
  /** Cached ÷ prompt tokens over the successful requests, as the pods reported them. */
  hitRate: Spread
  /** Stable only if every seed's run was; `why` names the seeds that were not. */
  stability: Stability & { seedsUnstable: number[] }
}

export function spreadOf(values: readonly number[]): Spread {
  if (values.length === 0) return { mean: Number.NaN, min: Number.NaN, max: Number.NaN }
  return {
    mean: values.reduce((sum, v) => sum + v, 0) / values.length,
    min: Math.min(...values),
    max: Math.max(...values),
  }
}

function pointOf(rate: number, runs: readonly BenchmarkRun[]): RatePoint {
  const metrics = runs.map((run) => computeBenchmarkMetrics(run))
  const stabilities = runs.map((run) => baselineStability(run))
  const unstable = runs.flatMap((run, i) => (stabilities[i]?.stable ? [] : [run.config.seed]))
  const first = stabilities[0] as Stability
  const worst = stabilities.find((s) => !s.stable) ?? first
  return {
    rate,
    seeds: runs.map((run) => run.config.seed),
    ttftMedianS: spreadOf(metrics.map((m) => m.time_to_first_token_ms.successful.median / 1000)),
    ttftP90S: spreadOf(
      metrics.map((m) => m.time_to_first_token_ms.successful.percentiles.p90 / 1000),
    ),
    e2eMedianS: spreadOf(metrics.map((m) => m.request_latency.successful.median)),
    achievedRps: spreadOf(metrics.map((m) => m.requests_per_second.successful.mean)),
    hitRate: spreadOf(runs.map((run) => computePrefixCacheSummary(run).request_hit_rate ?? 0)),
    stability: {
      ...worst,
      stable: unstable.length === 0,
      why:
        unstable.length === 0
          ? 'stable'
          : `${worst.why}${runs.length > 1 ? ` (seed ${unstable.join(', ')})` : ''}`,
      seedsUnstable: unstable,
    },
  }
}

/**
 * Per workload and router, one point per rate in ascending rate, each over the seeds
 * run at it (runs of one seed give a spread of zero width).
 */
export function ratePoints(runs: readonly BenchmarkRun[]): Map<string, Map<string, RatePoint[]>> {
  const grouped = new Map<string, Map<string, Map<number, BenchmarkRun[]>>>()
  for (const run of runs) {
    const byRouter = grouped.get(run.config.workload) ?? new Map()
    grouped.set(run.config.workload, byRouter)
    const byRate = byRouter.get(run.config.router) ?? new Map<number, BenchmarkRun[]>()
    byRouter.set(run.config.router, byRate)
    const rate = run.config.rate ?? 0
    byRate.set(rate, [...(byRate.get(rate) ?? []), run])
  }
  const out = new Map<string, Map<string, RatePoint[]>>()
  for (const [workload, byRouter] of grouped) {
    const routers = new Map<string, RatePoint[]>()
    for (const [router, byRate] of byRouter)
      routers.set(
        router,
        [...byRate.entries()].sort(([a], [b]) => a - b).map(([rate, list]) => pointOf(rate, list)),
      )
    out.set(workload, routers)
  }
  return out
}

/** Seconds (or any figure) to about three significant digits; "–" when not a number. */
export function formatSeconds(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return '–'
  return value >= 10 ? value.toFixed(1) : value.toFixed(value >= 1 ? 2 : digits)
}

/** "0.185 (0.180–0.190)" in seconds; the range only where seeds differ. */
export function formatSpread(spread: Spread, digits = 3): string {
  const f = (v: number) => formatSeconds(v, digits)
  return spread.max > spread.min
    ? `${f(spread.mean)} (${f(spread.min)}–${f(spread.max)})`
    : f(spread.mean)
}
