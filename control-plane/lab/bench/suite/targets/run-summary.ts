import type { ChatFrame } from '../../chat-prompt-ids.ts'
import {
  computeBenchmarkMetrics,
  computePrefixCacheSummary,
  requestTimings,
  statusOf,
} from '../../compute-benchmark-metrics.ts'
import { providerPod } from '../../des/des-admission.ts'
import { fanOutPrefills } from '../../fan-out-prefills.ts'
import type { BenchmarkRun, RequestRecord } from '../../request-record.ts'
import { summarizeDistribution } from '../../summarize-distribution.ts'
import { baselineStability, type Stability } from '../baseline-stability.ts'

/** The SLO the targets suite judges goodput and capacity by: TTFT within 2 s. */
export const sloTtftMs = 2_000

/** The time-per-output-token objective of the service-level suite's goodput. */
export const sloTpotMs = 200

/** What the targets suite reads from one benchmark run (its records are dropped). */
export interface RunSummary {
  router: string
  seed: number
  rate: number | null
  requests: number
  ttftMedianS: number
  ttftP90S: number
  ttftMeanS: number
  e2eMedianS: number
  /** p90 of the successful requests' end-to-end latency (the routing suite judges it). */
  e2eP90S: number
  servedRps: number
  hitRate: number
  /** Preemptions the pods reported over the run; null when the run does not say. */
  preemptions: number | null
  /**
   * Requests that completed with TTFT ≤ 2 s, per second of offered traffic (the arrival
   * span); a request that failed or was refused counts as a miss.
   */
  goodputRps: number
  /**
   * As goodputRps, counting only the requests that also kept their time per output token
   * within 200 ms (the service-level suite's objective).
   */
  tokenGoodputRps: number
  /** Of goodputRps, what the pool's own pods served (the rest came from the provider). */
  localGoodputRps: number
  /** Requests per second of offered traffic (the arrival span). */
  offeredRps: number
  /**
   * Per tenant (runs with tenants): p90 TTFT of its served requests, and its SLO goodput
   * (both objectives) per second of offered traffic.
   */
  tenants: Record<string, { ttftP90S: number; tokenGoodputRps: number; requests: number }>
  /** Shares of the requests the provider served, and the pool refused (429/503). */
  providerShare: number
  refusedShare: number
  duplicatePrefillRatio: number | null
  /**
   * Requests that finished within the run, of all of them: by the last arrival plus the
   * longest e2e latency among the requests that started in the run's first third (what a
   * request took before any queue could build). A pool that keeps up finishes its last
   * requests about as fast as its first; one falling behind leaves them late.
   */
  completedWithinRun: number
  stability: Stability
}

function offeredSeconds(run: BenchmarkRun): number {
  const starts = run.records.map((r) => r.startMs)
  if (starts.length < 2) return (run.endMs - run.startMs) / 1000
  return (Math.max(...starts) - Math.min(...starts)) / 1000
}

export function completedWithinRun(run: BenchmarkRun): number {
  const records = run.records
  if (records.length === 0) return 0
  const byStart = [...records].sort((a, b) => a.startMs - b.startMs)
  const first = byStart.slice(0, Math.max(1, Math.floor(byStart.length / 3)))
  const allowance = Math.max(
    0,
    ...first.filter((r) => statusOf(r) === 'successful').map((r) => r.endMs - r.startMs),
  )
  const deadline = (byStart.at(-1)?.startMs ?? 0) + allowance
  const done = records.filter((r) => statusOf(r) === 'successful' && r.endMs <= deadline)
  return done.length / records.length
}

export function summarizeRun(run: BenchmarkRun, frame: ChatFrame): RunSummary {
  const metrics = computeBenchmarkMetrics(run)
  const ttft = metrics.time_to_first_token_ms.successful
  const goodOnes = run.records.filter(metTtft)
  const good = goodOnes.length
  const tokenGood = run.records.filter(metObjectives).length
  const local = goodOnes.filter((r) => r.pod !== providerPod).length
  const seconds = offeredSeconds(run)
  const share = (count: number) => (run.records.length > 0 ? count / run.records.length : 0)
  return {
    router: run.config.router,
    seed: run.config.seed,
    rate: run.config.rate,
    requests: run.records.length,
    ttftMedianS: ttft.median / 1000,
    ttftP90S: ttft.percentiles.p90 / 1000,
    ttftMeanS: ttft.mean / 1000,
    e2eMedianS: metrics.request_latency.successful.median,
    e2eP90S: metrics.request_latency.successful.percentiles.p90,
    servedRps: metrics.requests_per_second.successful.mean,
    hitRate: computePrefixCacheSummary(run).request_hit_rate ?? 0,
    preemptions: run.preemptions ?? null,
    goodputRps: seconds > 0 ? good / seconds : 0,
    tokenGoodputRps: seconds > 0 ? tokenGood / seconds : 0,
    tenants: tenantSummaries(run, seconds),
    localGoodputRps: seconds > 0 ? local / seconds : 0,
    offeredRps: seconds > 0 ? run.records.length / seconds : 0,
    providerShare: share(run.records.filter((r) => r.pod === providerPod).length),
    refusedShare: share(run.records.filter((r) => r.pod === null && r.error !== null).length),
    duplicatePrefillRatio: fanOutPrefills(run, frame)?.duplicatePrefillRatio ?? null,
    completedWithinRun: completedWithinRun(run),
    stability: baselineStability(run),
  }
}

/** A request served with its first token within 2 s. */
function metTtft(record: RequestRecord): boolean {
  const ttft = requestTimings(record).timeToFirstTokenMs
  return statusOf(record) === 'successful' && ttft !== null && ttft <= sloTtftMs
}

/** A request met both objectives of the service-level suite (one token has no gap). */
function metObjectives(record: RequestRecord): boolean {
  return metTtft(record) && (requestTimings(record).interTokenLatencyMs ?? 0) <= sloTpotMs
}

function tenantSummaries(run: BenchmarkRun, seconds: number): RunSummary['tenants'] {
  const names = [...new Set(run.records.flatMap((r) => (r.tenant === undefined ? [] : [r.tenant])))]
  return Object.fromEntries(
    names.map((name) => {
      const mine = run.records.filter((r) => r.tenant === name)
      const ttfts = mine.flatMap((r) => {
        const ttft = requestTimings(r).timeToFirstTokenMs
        return statusOf(r) === 'successful' && ttft !== null ? [ttft / 1000] : []
      })
      const good = mine.filter(metObjectives).length
      return [
        name,
        {
          ttftP90S: summarizeDistribution(ttfts).percentiles.p90,
          tokenGoodputRps: seconds > 0 ? good / seconds : 0,
          requests: mine.length,
        },
      ]
    }),
  )
}
