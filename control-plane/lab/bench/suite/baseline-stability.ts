import { statusOf } from '../compute-benchmark-metrics.ts'
import type { BenchmarkRun, RequestRecord } from '../request-record.ts'

/** Served fraction below which an open-loop run is falling behind its arrivals. */
export const minServedFraction = 0.95
/**
 * The last third's median TTFT may exceed the first third's by this factor plus
 * `trendSlackS` before the run counts as trending: a queue that grows for the whole run
 * makes every ratio against it a function of the run's length.
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

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

function thirds(records: readonly RequestRecord[]): [number, number, number] {
  const ok = records
    .filter((r) => statusOf(r) === 'successful' && r.firstTokenMs !== null)
    .sort((a, b) => a.startMs - b.startMs)
  const cut = (from: number, to: number) =>
    median(
      ok
        .slice(Math.floor((from * ok.length) / 3), Math.floor((to * ok.length) / 3))
        .map((r) => ((r.firstTokenMs as number) - r.startMs) / 1000),
    )
  return [cut(0, 1), cut(1, 2), cut(2, 3)]
}

function servedFraction(run: BenchmarkRun): number | null {
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
  return arrived === 0 ? null : finished / arrived
}

/**
 * Whether a run is a usable baseline for a ratio: it served (nearly) what was offered and
 * its TTFT did not trend upward across the run. Round robin past its collapse fails both,
 * and a ratio against it then grows with --max-requests instead of measuring routing.
 */
export function baselineStability(run: BenchmarkRun): Stability {
  const served = servedFraction(run)
  const [a, b, c] = thirds(run.records)
  const problems: string[] = []
  if (served !== null && served < minServedFraction)
    problems.push(`served ${(served * 100).toFixed(0)}% of offered`)
  if (Number.isFinite(a) && Number.isFinite(c) && c > a * maxTrendFactor + trendSlackS)
    problems.push(`TTFT trending ${fmt(a)} → ${fmt(b)} → ${fmt(c)} s`)
  return {
    servedFraction: served,
    thirdsTtftS: [a, b, c],
    stable: problems.length === 0,
    why: problems.length === 0 ? 'stable' : problems.join(', '),
  }
}

const fmt = (seconds: number) => (seconds >= 10 ? seconds.toFixed(1) : seconds.toFixed(2))
