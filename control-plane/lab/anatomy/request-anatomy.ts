import { requestTimings } from '../bench/compute-benchmark-metrics.ts'
import type { RequestRecord } from '../bench/request-record.ts'
import { quantileOf } from '../bench/summarize-distribution.ts'

/** TTFT in seconds of the requests in one group (a turn, a pod, a window of arrivals). */
export interface TtftGroup {
  key: string
  requests: number
  medianS: number
  p90S: number
  /** Share of the group's requests that reused less than `missFraction` of their prompt. */
  missShare: number
}

/** What the pods held when a slow request was sent: its pod against the least busy other. */
export interface DispatchLoad {
  slowRequests: number
  /** Means over the slow requests: requests in flight and waiting for a first token. */
  chosen: { inFlight: number; waiting: number }
  leastBusyOther: { inFlight: number; waiting: number }
}

/** A request counts as a miss when the pod served less of its prompt than this from cache. */
const missFraction = 0.5

/** TTFT in seconds as the benchmark reports define it (requestTimings); null without a token. */
export function ttftSeconds(record: RequestRecord): number | null {
  const ms = requestTimings(record).timeToFirstTokenMs
  return ms === null ? null : ms / 1000
}

/** The reports' quantile (the inverted CDF, quantileOf) of plain samples; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b).map((value) => [value, 1] as const)
  return quantileOf(sorted, q, true)
}

/** TTFT of `records` as one group named `key`. */
export function group(key: string, records: readonly RequestRecord[]): TtftGroup {
  const ttfts = records.flatMap((r) => {
    const t = ttftSeconds(r)
    return t === null ? [] : [t]
  })
  const misses = records.filter((r) => r.cachedTokens < missFraction * r.promptTokens).length
  return {
    key,
    requests: records.length,
    medianS: quantile(ttfts, 0.5),
    p90S: quantile(ttfts, 0.9),
    missShare: records.length === 0 ? Number.NaN : misses / records.length,
  }
}

function groupBy(
  records: readonly RequestRecord[],
  keyOf: (record: RequestRecord) => string,
): TtftGroup[] {
  const groups = new Map<string, RequestRecord[]>()
  for (const record of records) {
    const key = keyOf(record)
    const list = groups.get(key) ?? []
    list.push(record)
    groups.set(key, list)
  }
  return [...groups.entries()].map(([key, list]) => group(key, list))
}

/** Per turn of a conversation (turn 0 for single-turn traffic). */
export function byTurn(records: readonly RequestRecord[]): TtftGroup[] {
  return groupBy(records, (r) => `turn ${r.turn}`).sort((a, b) => a.key.localeCompare(b.key))
}

/** Per pod that served the request. */
export function byPod(records: readonly RequestRecord[]): TtftGroup[] {
  return groupBy(records, (r) => r.pod ?? 'none').sort((a, b) => a.key.localeCompare(b.key))
}

/** Per window of `windowS` seconds of arrivals, from the first request sent. */
export function byWindow(records: readonly RequestRecord[], windowS: number): TtftGroup[] {
  if (records.length === 0) return []
  const first = Math.min(...records.map((r) => r.startMs))
  const windowOf = (r: RequestRecord) => Math.floor((r.startMs - first) / 1000 / windowS)
  return groupBy(records, (r) => String(windowOf(r) * windowS))
    .sort((a, b) => Number(a.key) - Number(b.key))
    .map((g) => ({ ...g, key: `${g.key} s` }))
}

/** Requests in flight on `pod` at `atMs`, and those of them still without a first token. */
function podLoadAt(records: readonly RequestRecord[], pod: string, atMs: number) {
  let inFlight = 0
  let waiting = 0
  for (const r of records) {
    if (r.pod !== pod || r.startMs >= atMs || r.endMs <= atMs) continue
    inFlight++
    if (r.firstTokenMs === null || r.firstTokenMs > atMs) waiting++
  }
  return { inFlight, waiting }
}

/**
 * For the requests slower than the `slowQuantile` of TTFT over all `runs`, what their pod had
 * in flight and waiting when they were sent, against the least busy other pod then (fewest
 * waiting), each within its own run: a router that piles requests on one pod shows a gap;
 * one whose every pod is full shows none.
 */
export function dispatchLoad(
  runs: readonly (readonly RequestRecord[])[],
  slowQuantile: number,
): DispatchLoad {
  const ttfts = runs.flat().flatMap((r) => {
    const t = ttftSeconds(r)
    return t === null ? [] : [t]
  })
  const threshold = quantile(ttfts, slowQuantile)
  const sums = { chosen: { inFlight: 0, waiting: 0 }, other: { inFlight: 0, waiting: 0 } }
  let counted = 0
  for (const records of runs) {
    const pods = [...new Set(records.flatMap((r) => (r.pod === null ? [] : [r.pod])))]
    for (const r of records) {
      if (r.pod === null || (ttftSeconds(r) ?? Infinity) <= threshold) continue
      const others = pods.filter((p) => p !== r.pod).map((p) => podLoadAt(records, p, r.startMs))
      if (others.length === 0) continue
      const chosen = podLoadAt(records, r.pod, r.startMs)
      const least = others.reduce((a, b) =>
        b.waiting < a.waiting || (b.waiting === a.waiting && b.inFlight < a.inFlight) ? b : a,
      )
      sums.chosen.inFlight += chosen.inFlight
      sums.chosen.waiting += chosen.waiting
      sums.other.inFlight += least.inFlight
      sums.other.waiting += least.waiting
      counted++
    }
  }
  const mean = (value: number) => (counted === 0 ? Number.NaN : value / counted)
  return {
    slowRequests: counted,
    chosen: { inFlight: mean(sums.chosen.inFlight), waiting: mean(sums.chosen.waiting) },
    leastBusyOther: { inFlight: mean(sums.other.inFlight), waiting: mean(sums.other.waiting) },
  }
}
