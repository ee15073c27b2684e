import { statusOf } from '../compute-benchmark-metrics.ts'
import type { BenchmarkRun, RequestRecord } from '../request-record.ts'

/** Served fraction below which an open-loop run is falling behind its arrivals. */
export const minServedFraction = 0.95
/**
 * The last third's median or p90 TTFT may exceed the first third's by this factor plus
 * `trendSlackS` before the run counts as trending: a queue that grows for the whole run
 * makes every ratio against it, and every capacity measured by it, a function of the run's
 * length. The p90 is compared as well as the median because a pool just past its knee
 * queues its slowest requests first: the tail trends while the median still looks flat.
 */
export const maxTrendFactor = 1.5
export const trendSlackS = 0.25

export interface Stability {
  /**
   * Open loop: requests finished during the middle third of the arrival window ÷ requests
   * that arrived in it (about 1 in steady state, lower while a queue builds). Closed loop:
   * null, as a closed loop cannot fall behind its own sending.
   */
  servedFraction: number | null
  /** Median TTFT (s) of the successful requests started in each third of the run. */
  thirdsTtftS: [number, number, number]
  stable: boolean
  /** In words, for the report: "stable", or what failed. */
  why: string
}

type Thirds = [number, number, number]

/** The q-quantile (0..1) by linear interpolation between closest ranks; NaN when empty. */
function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const at = q * (sorted.length - 1)
  const below = sorted[Math.floor(at)] as number
  const above = sorted[Math.ceil(at)] as number
  return below + (above - below) * (at - Math.floor(at))
}

/** TTFTs (s) of the successful requests, split into thirds by start time. */
function ttftThirds(records: readonly RequestRecord[]): [number[], number[], number[]] {
  const ok = records
    .filter((r) => statusOf(r) === 'successful' && r.firstTokenMs !== null)
    .sort((a, b) => a.startMs - b.startMs)
  const cut = (from: number, to: number) =>
    ok
      .slice(Math.floor((from * ok.length) / 3), Math.floor((to * ok.length) / 3))
      .map((r) => ((r.firstTokenMs as number) - r.startMs) / 1000)
  return [cut(0, 1), cut(1, 2), cut(2, 3)]
}

const quantiles = (parts: readonly number[][], q: number): Thirds => [
  quantile(parts[0] ?? [], q),
  quantile(parts[1] ?? [], q),
  quantile(parts[2] ?? [], q),
]

const trending = ([a, , c]: Thirds) =>
  Number.isFinite(a) && Number.isFinite(c) && c > a * maxTrendFactor + trendSlackS

/**
 * The measured window of an open-loop run, the middle third of its arrivals (first to last
 * start): what arrived in it and what finished successfully in it, whenever it started.
 * Null for a closed loop, or where nothing arrived in the window.
 */
export interface ServedWindow {
  seconds: number
  arrived: number
  finished: number
}

export function servedWindow(run: BenchmarkRun): ServedWindow | null {
  const open = run.config.profile.startsWith('poisson') || run.config.profile.startsWith('constant')
  if (!open || run.records.length < 3) return null
  const starts = run.records.map((r) => r.startMs)
  const first = Math.min(...starts)
  const last = Math.max(...starts)
  const from = first + (last - first) / 3
  const to = first + (2 * (last - first)) / 3
  const arrived = run.records.filter((r) => r.startMs >= from && r.startMs < to).length
  const finished = run.records.filter(
    (r) => statusOf(r) === 'successful' && r.endMs >= from && r.endMs < to,
  ).length
  return arrived === 0 ? null : { seconds: (to - from) / 1000, arrived, finished }
}

/**
 * "served 38% of offered in the measured window (...: 1.90 of 5.00 req/s)": the window
 * named, and its two rates, whose ratio is the percentage. A run's served req/s elsewhere
 * in a report covers the whole run, its drain after the last arrival included, so beside
 * it a fraction without its window reads as a contradiction (0% next to 2.4 req/s).
 */
export function describeServed(window: ServedWindow): string {
  const rate = (count: number) => (window.seconds > 0 ? count / window.seconds : 0).toFixed(2)
  const percent = ((window.finished / window.arrived) * 100).toFixed(0)
  return `served ${percent}% of offered in the measured window (the middle third of the arrivals: ${rate(window.finished)} of ${rate(window.arrived)} req/s)`
}

/**
 * Whether a run is in steady state, so usable as a baseline for a ratio or as a capacity
 * (find-capacity.ts): it served (nearly) what was offered and neither its median nor its
 * p90 TTFT trended upward across the run. Round robin past its collapse fails both,
 * and a ratio against it then grows with --max-requests instead of measuring routing.
 */
export function baselineStability(run: BenchmarkRun): Stability {
  const window = servedWindow(run)
  const served = window === null ? null : window.finished / window.arrived
  const parts = ttftThirds(run.records)
  const medians = quantiles(parts, 0.5)
  const p90s = quantiles(parts, 0.9)
  const problems: string[] = []
  if (window !== null && served !== null && served < minServedFraction)
    problems.push(describeServed(window))
  if (trending(medians)) problems.push(`TTFT trending ${arrow(medians)} s`)
  else if (trending(p90s)) problems.push(`p90 TTFT trending ${arrow(p90s)} s`)
  return {
    servedFraction: served,
    thirdsTtftS: medians,
    stable: problems.length === 0,
    why: problems.length === 0 ? 'stable' : problems.join(', '),
  }
}

const arrow = (thirds: Thirds) => thirds.map(fmt).join(' → ')
const fmt = (seconds: number) => (seconds >= 10 ? seconds.toFixed(1) : seconds.toFixed(2))
