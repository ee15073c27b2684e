import { KinfError, type KinfErrorCode } from '../../../shared/errors/kinf-error.ts'
import { statusOf } from './compute-benchmark-metrics.ts'
import type { BenchmarkRun, RequestRecord } from './request-record.ts'

/** The requests of some runs that did not succeed, and the first of them to be sent. */
export interface BenchmarkFailures {
  total: number
  failed: number
  /** The first failed request's error ("HTTP 401: Invalid API key", a network error); null when none failed. */
  firstError: string | null
}

/** Failed (errored or never finished) over every request of `runs`; the first by start time. */
export function benchmarkFailures(runs: readonly BenchmarkRun[]): BenchmarkFailures {
  let total = 0
  let first: RequestRecord | null = null
  let failed = 0
  for (const run of runs)
    for (const record of run.records) {
      total++
      if (statusOf(record) === 'successful') continue
      failed++
      if (first === null || record.startMs < first.startMs) first = record
    }
  return {
    total,
    failed,
    firstError: first === null ? null : (first.error ?? 'did not finish'),
  }
}

/**
 * The error a benchmark whose every request failed ends with: the first error, coded as
 * its HTTP status says (send-streamed-chat.ts writes "HTTP <status>: <message>"), so kinfctl
 * exits as it would for that error itself (401 and 403 denied, 429 and 503 retry later);
 * without a status (refused connection, timeout) the target was unreachable. Null when any
 * request succeeded, or none was sent.
 */
export function everyRequestFailed(failures: BenchmarkFailures): KinfError | null {
  if (failures.total === 0 || failures.failed < failures.total) return null
  const first = failures.firstError ?? 'did not finish'
  const status = Number(/^HTTP (\d{3})\b/.exec(first)?.[1] ?? Number.NaN)
  return new KinfError(
    codeOfStatus(status),
    `every request failed (${failures.failed} of ${failures.total}); the first: ${first}`,
  )
}

function codeOfStatus(status: number): KinfErrorCode {
  if (Number.isNaN(status)) return 'upstream_unavailable'
  if (status === 401) return 'unauthorized'
  if (status === 403) return 'forbidden'
  if (status === 429) return 'rate_limited'
  if (status === 503) return 'upstream_unavailable'
  if (status === 404) return 'not_found'
  if (status >= 400 && status < 500) return 'invalid_request'
  return 'upstream_error'
}
