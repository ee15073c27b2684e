import type { BenchmarkRun, RequestRecord } from './request-record.ts'
import {
  type DistributionSummary,
  type Occurrence,
  summarizeConcurrency,
  summarizeDistribution,
  summarizeRate,
  type Weighted,
} from './summarize-distribution.ts'

/** GuideLLM's StatusBreakdown: one value per request status and one over all of them. */
export interface StatusBreakdown<T> {
  successful: T
  incomplete: T
  errored: T
  total: T
}

export type StatusDistributionSummary = StatusBreakdown<DistributionSummary>

/** The fields of GuideLLM's GenerativeMetrics that a text benchmark fills, same names and units. */
export interface BenchmarkMetrics {
  request_totals: StatusBreakdown<number>
  requests_per_second: StatusDistributionSummary
  request_concurrency: StatusDistributionSummary
  /** Seconds. */
  request_latency: StatusDistributionSummary
  prompt_token_count: StatusDistributionSummary
  output_token_count: StatusDistributionSummary
  total_token_count: StatusDistributionSummary
  time_to_first_token_ms: StatusDistributionSummary
  /** GuideLLM's TPOT, which includes the TTFT; weighted by output tokens. */
  time_per_output_token_ms: StatusDistributionSummary
  /** Weighted by output tokens − 1. */
  inter_token_latency_ms: StatusDistributionSummary
  prompt_tokens_per_second: StatusDistributionSummary
  output_tokens_per_second: StatusDistributionSummary
  tokens_per_second: StatusDistributionSummary
}

/** How much of the prompts the pods served from their prefix caches. */
export interface PrefixCacheSummary {
  /** The pods' own counters over the run (tokens); null when the run has none. */
  pod_queries: number | null
  pod_hits: number | null
  pod_hit_rate: number | null
  /** From the successful requests' usage: cached_tokens over prompt_tokens. */
  request_prompt_tokens: number
  request_cached_tokens: number
  request_hit_rate: number | null
}

type Status = Exclude<keyof StatusBreakdown<unknown>, 'total'>
type Sample = number | Weighted

/**
 * A request's status: incomplete when it never ended (no finite end time; a finished
 * run has none), errored when `error` is set, successful otherwise.
 */
export function statusOf(record: RequestRecord): Status {
  if (!Number.isFinite(record.endMs)) return 'incomplete'
  return record.error === null ? 'successful' : 'errored'
}

const lastTokenMs = (record: RequestRecord): number | null => record.tokenTimesMs.at(-1) ?? null

/**
 * Per-request values with GuideLLM's definitions (request_stats.py). TTFT = first token −
 * start; ITL = (last token − first token)/(output − 1), only with ≥ 2 output tokens; TPOT =
 * (last token, else end, − start)/output, so it includes the TTFT; latency = end − start.
 */
export function requestTimings(record: RequestRecord) {
  const first = record.firstTokenMs
  const last = lastTokenMs(record)
  const output = record.outputTokens
  return {
    timeToFirstTokenMs: first === null ? null : first - record.startMs,
    interTokenLatencyMs:
      first === null || last === null || output <= 1 ? null : (last - first) / (output - 1),
    timePerOutputTokenMs: output > 0 ? ((last ?? record.endMs) - record.startMs) / output : null,
    requestLatencySeconds: (record.endMs - record.startMs) / 1000,
  }
}

/**
 * When a request's output tokens arrived, in seconds: one at the first token, and the
 * rest spread over the remaining chunks. GuideLLM spaces those chunks evenly between the
 * first and last token because it keeps no per-chunk times; the records keep them, so
 * the real arrival times are used. Without chunks, every token at the last token or end.
 */
function outputTokenTimes(record: RequestRecord): Occurrence[] {
  const times = record.tokenTimesMs
  const output = record.outputTokens
  if (record.firstTokenMs === null || times.length <= 1) {
    return [[(lastTokenMs(record) ?? record.endMs) / 1000, output]]
  }
  const out: Occurrence[] = [[record.firstTokenMs / 1000, output > 0 ? 1 : 0]]
  if (output <= 1) return out
  const perChunk = (output - 1) / (times.length - 1)
  for (let i = 1; i < times.length; i++) out.push([(times[i] as number) / 1000, perChunk])
  return out
}

/** The prompt counts as processed at the first token (or the end without one). */
const promptTokenTime = (record: RequestRecord): Occurrence => [
  (record.firstTokenMs ?? record.endMs) / 1000,
  record.promptTokens,
]

function byStatus(
  groups: Record<Status, RequestRecord[]>,
  summarize: (records: RequestRecord[]) => DistributionSummary,
): StatusDistributionSummary {
  const successful = summarize(groups.successful)
  const allSuccessful = groups.incomplete.length === 0 && groups.errored.length === 0
  return {
    successful,
    incomplete: summarize(groups.incomplete),
    errored: summarize(groups.errored),
    // The same requests give the same summary: a clean run needs it once.
    total: allSuccessful
      ? successful
      : summarize([...groups.successful, ...groups.incomplete, ...groups.errored]),
  }
}

function values(
  groups: Record<Status, RequestRecord[]>,
  pick: (record: RequestRecord) => Sample | null,
): StatusDistributionSummary {
  return byStatus(groups, (records) => {
    const samples: Sample[] = []
    for (const record of records) {
      const sample = pick(record)
      if (sample !== null) samples.push(sample)
    }
    return summarizeDistribution(samples)
  })
}

/**
 * GuideLLM's metrics of one benchmark (metrics.py `GenerativeMetrics.compile`), over the
 * run's window [startMs, endMs]: value distributions per request, throughputs as
 * time-weighted rate distributions of event times (completions; prompt tokens at the
 * first token; output tokens as they arrived), concurrency as a time-weighted
 * distribution of requests in flight. Percentiles are the inverted CDF (see
 * `quantileOf`). One deliberate difference: a request without a TTFT (an error before
 * any token) is left out of the TTFT distribution, where GuideLLM counts it as 0 ms.
 */
export function computeBenchmarkMetrics(run: BenchmarkRun): BenchmarkMetrics {
  // A run is not changed once made; the suite's summary and the report both ask.
  const known = computed.get(run)
  if (known) return known
  const metrics = compute(run)
  computed.set(run, metrics)
  return metrics
}

const computed = new WeakMap<BenchmarkRun, BenchmarkMetrics>()

/** Metrics computed elsewhere for this run (a worker thread that ran it). */
export function rememberBenchmarkMetrics(run: BenchmarkRun, metrics: BenchmarkMetrics): void {
  computed.set(run, metrics)
}

function compute(run: BenchmarkRun): BenchmarkMetrics {
  const groups: Record<Status, RequestRecord[]> = { successful: [], incomplete: [], errored: [] }
  for (const record of run.records) groups[statusOf(record)].push(record)
  const start = run.startMs / 1000
  const end = run.endMs / 1000
  const ended = (record: RequestRecord) => Number.isFinite(record.endMs)
  const rate = (events: (record: RequestRecord) => Occurrence[]) =>
    byStatus(groups, (records) => summarizeRate(records.filter(ended).flatMap(events), start, end))
  return {
    request_totals: {
      successful: groups.successful.length,
      incomplete: groups.incomplete.length,
      errored: groups.errored.length,
      total: run.records.length,
    },
    requests_per_second: rate((record) => [[record.endMs / 1000, 1]]),
    request_concurrency: byStatus(groups, (records) =>
      summarizeConcurrency(
        records
          .filter(ended)
          .map((record) => [record.startMs / 1000, record.endMs / 1000] as const),
        start,
        end,
      ),
    ),
    request_latency: values(groups, (record) =>
      ended(record) ? requestTimings(record).requestLatencySeconds : null,
    ),
    prompt_token_count: values(groups, (record) => record.promptTokens),
    output_token_count: values(groups, (record) => record.outputTokens),
    total_token_count: values(groups, (record) => record.promptTokens + record.outputTokens),
    time_to_first_token_ms: values(groups, (record) => requestTimings(record).timeToFirstTokenMs),
    time_per_output_token_ms: values(groups, (record) => {
      const tpot = requestTimings(record).timePerOutputTokenMs
      return tpot === null ? null : [tpot, record.outputTokens]
    }),
    inter_token_latency_ms: values(groups, (record) => {
      const itl = requestTimings(record).interTokenLatencyMs
      return itl === null ? null : [itl, record.outputTokens - 1]
    }),
    prompt_tokens_per_second: rate((record) => [promptTokenTime(record)]),
    output_tokens_per_second: rate(outputTokenTimes),
    tokens_per_second: rate((record) => [promptTokenTime(record), ...outputTokenTimes(record)]),
  }
}

/** The prefix-cache hit rate, from the pods' counters and from the requests' usage. */
export function computePrefixCacheSummary(run: BenchmarkRun): PrefixCacheSummary {
  let prompt = 0
  let cached = 0
  for (const record of run.records) {
    if (statusOf(record) !== 'successful') continue
    prompt += record.promptTokens
    cached += record.cachedTokens
  }
  const pod = run.prefixCache
  return {
    pod_queries: pod?.queries ?? null,
    pod_hits: pod?.hits ?? null,
    pod_hit_rate: pod && pod.queries > 0 ? pod.hits / pod.queries : null,
    request_prompt_tokens: prompt,
    request_cached_tokens: cached,
    request_hit_rate: prompt > 0 ? cached / prompt : null,
  }
}
