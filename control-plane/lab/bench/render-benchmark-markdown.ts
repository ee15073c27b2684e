import type { BenchmarkReportEntry } from './benchmark-report-entry.ts'

const columns = [
  'Router',
  'Profile',
  'Rate',
  'TTFT median (s)',
  'TTFT p90 (s)',
  'E2E median (s)',
  'ITL median (ms)',
  'Output tok/s',
  'Req/s',
  'Prefix-cache hit rate',
  'Errors',
]

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
const fixed = (value: number, digits: number) =>
  Number.isFinite(value) ? value.toFixed(digits) : '—'
const percent = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)}%`)

/** Entries ordered by router (first appearance), then rate (no rate last), then profile. */
export function orderEntries(entries: readonly BenchmarkReportEntry[]): BenchmarkReportEntry[] {
  const routers = [...new Set(entries.map((entry) => entry.config.router))]
  const rate = (entry: BenchmarkReportEntry) => entry.config.rate ?? Number.POSITIVE_INFINITY
  return [...entries].sort(
    (a, b) =>
      routers.indexOf(a.config.router) - routers.indexOf(b.config.router) ||
      rate(a) - rate(b) ||
      a.config.profile.localeCompare(b.config.profile),
  )
}

function row(entry: BenchmarkReportEntry): string[] {
  const { metrics, prefix_cache: cache, config } = entry
  const ttft = metrics.time_to_first_token_ms.successful
  const totals = metrics.request_totals
  return [
    cell(config.router),
    cell(config.profile),
    config.rate === null ? '—' : String(config.rate),
    fixed(ttft.median / 1000, 3),
    fixed(ttft.percentiles.p90 / 1000, 3),
    fixed(metrics.request_latency.successful.median, 3),
    fixed(metrics.inter_token_latency_ms.successful.median, 1),
    fixed(metrics.output_tokens_per_second.successful.mean, 1),
    fixed(metrics.requests_per_second.successful.mean, 2),
    percent(cache.pod_hit_rate ?? cache.request_hit_rate),
    `${totals.errored + totals.incomplete}/${totals.total}`,
  ]
}

/** What the runs of one workload share, when they share it (else the distinct values). */
function describeSetup(entries: readonly BenchmarkReportEntry[]): string {
  const distinct = (pick: (entry: BenchmarkReportEntry) => string | number) =>
    [...new Set(entries.map(pick))].join(', ')
  return [
    `data \`${distinct((e) => e.config.data).replaceAll('`', "'")}\``,
    `pods ${distinct((e) => e.config.pods)}`,
    `GPU profile ${distinct((e) => e.config.gpu_profile)}`,
    `mode ${distinct((e) => e.config.mode)}`,
    `seed ${distinct((e) => e.config.seed)}`,
  ].join(' · ')
}

/** A line per benchmark with failed requests: how many, and the first one's error. */
function failureLines(entries: readonly BenchmarkReportEntry[]): string[] {
  const lines = orderEntries(entries).flatMap((entry) => {
    const totals = entry.metrics.request_totals
    const failed = totals.errored + totals.incomplete
    if (failed === 0) return []
    const first = entry.first_error === null ? '' : `; the first: ${entry.first_error}`
    return [
      `- ${cell(entry.config.router)} at ${cell(entry.config.profile)}: ${failed} of ${totals.total} requests failed${cell(first)}`,
    ]
  })
  return lines.length === 0 ? [] : ['Failed requests:', '', ...lines, '']
}

/**
 * The benchmarks as Markdown: one table per workload, a row per router and rate, with
 * the successful requests' TTFT (median, p90), end-to-end median, ITL median, mean output
 * and request throughput, the prefix-cache hit rate (the pods' counters when the run has
 * them, else cached over prompt tokens from usage) and failed/total requests; under it,
 * each benchmark with failures and its first error.
 */
export function renderBenchmarkMarkdown(
  groups: ReadonlyMap<string, readonly BenchmarkReportEntry[]>,
): string {
  const lines = ['# Benchmarks', '']
  if (groups.size === 0) lines.push('No benchmarks were run.', '')
  for (const [workload, entries] of groups) {
    lines.push(`## ${cell(workload)}`, '', describeSetup(entries), '')
    lines.push(`| ${columns.join(' | ')} |`)
    lines.push(`|${columns.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`)
    for (const entry of orderEntries(entries)) lines.push(`| ${row(entry).join(' | ')} |`)
    lines.push('', ...failureLines(entries))
  }
  return lines.join('\n')
}
