import type { ChatFrame } from '../../chat-prompt-ids.ts'
import {
  computeBenchmarkMetrics,
  computePrefixCacheSummary,
  statusOf,
} from '../../compute-benchmark-metrics.ts'
import { fanOutPrefills } from '../../fan-out-prefills.ts'
import type { BenchmarkRun } from '../../request-record.ts'
import { baselineStability, type Stability } from '../baseline-stability.ts'

/** The SLO the second wave judges goodput and capacity by: TTFT within 2 s. */
export const sloTtftMs = 2_000

/** What the second wave's targets read from one benchmark run (its records are dropped). */
export interface RunSummary {
  router: string
  seed: number
  rate: number | null
  requests: number
  ttftMedianS: number
  ttftP90S: number
  ttftMeanS: number
  e2eMedianS: number
  servedRps: number
  hitRate: number
  /** Preemptions the pods reported over the run; null when the run does not say. */
  preemptions: number | null
  /**
   * Requests that completed with TTFT ≤ 2 s, per second of offered traffic (the arrival
   * span); a request that failed or was refused counts as a miss.
   */
  goodputRps: number
  duplicatePrefillRatio: number | null
  stability: Stability
}

function offeredSeconds(run: BenchmarkRun): number {
  const starts = run.records.map((r) => r.startMs)
  if (starts.length < 2) return (run.endMs - run.startMs) / 1000
  return (Math.max(...starts) - Math.min(...starts)) / 1000
}

export function summarizeRun(run: BenchmarkRun, frame: ChatFrame): RunSummary {
  const metrics = computeBenchmarkMetrics(run)
  const ttft = metrics.time_to_first_token_ms.successful
  const good = run.records.filter(
    (r) =>
      statusOf(r) === 'successful' &&
      r.firstTokenMs !== null &&
      r.firstTokenMs - r.startMs <= sloTtftMs,
  ).length
  const seconds = offeredSeconds(run)
  return {
    router: run.config.router,
    seed: run.config.seed,
    rate: run.config.rate,
    requests: run.records.length,
    ttftMedianS: ttft.median / 1000,
    ttftP90S: ttft.percentiles.p90 / 1000,
    ttftMeanS: ttft.mean / 1000,
    e2eMedianS: metrics.request_latency.successful.median,
    servedRps: metrics.requests_per_second.successful.mean,
    hitRate: computePrefixCacheSummary(run).request_hit_rate ?? 0,
    preemptions: run.preemptions ?? null,
    goodputRps: seconds > 0 ? good / seconds : 0,
    duplicatePrefillRatio: fanOutPrefills(run, frame)?.duplicatePrefillRatio ?? null,
    stability: baselineStability(run),
  }
}
