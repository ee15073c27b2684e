import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { benchmarkFailures } from './benchmark-failures.ts'
import type { BenchmarkReportEntry } from './benchmark-report-entry.ts'
import { computeBenchmarkMetrics, computePrefixCacheSummary } from './compute-benchmark-metrics.ts'
import { type ChartBounds, renderBenchmarkChart } from './render-benchmark-chart.ts'
import { renderBenchmarkMarkdown } from './render-benchmark-markdown.ts'
import type { BenchmarkRun } from './request-record.ts'
import type { WorkloadBounds } from './suite/rate-table.ts'

/** Shaped like GuideLLM's benchmarks.json, so `benchmarks[].metrics.<metric>.successful.median` works. */
export interface BenchmarkReport {
  metadata: { version: number; kinference_version: string; node_version: string; platform: string }
  args: Record<string, unknown>
  benchmarks: BenchmarkReportEntry[]
}

export interface BenchmarkReportOptions {
  /** The arguments the benchmark ran with, copied into `args`. */
  args?: Record<string, unknown>
  /** Default: the version in the project's package.json. */
  kinferenceVersion?: string
  /** Put before the tables of benchmarks.md (a suite's summary). */
  summaryMarkdown?: string
  /** Each workload's bounds, drawn on its chart. */
  bounds?: ReadonlyMap<string, WorkloadBounds>
}

/** The report's format version (GuideLLM's metadata.version). */
export const benchmarkReportVersion = 1

export function toReportEntry(run: BenchmarkRun): BenchmarkReportEntry {
  const metrics = computeBenchmarkMetrics(run)
  return {
    config: {
      router: run.config.router,
      workload: run.config.workload,
      profile: run.config.profile,
      rate: run.config.rate,
      mode: run.config.mode,
      pods: run.config.pods,
      gpu_profile: run.config.gpuProfile,
      seed: run.config.seed,
      data: run.config.dataSpec,
    },
    scheduler_metrics: {
      start_time: run.startMs / 1000,
      end_time: run.endMs / 1000,
      requests_made: metrics.request_totals,
      elapsed_seconds: run.elapsedSeconds,
    },
    metrics,
    prefix_cache: computePrefixCacheSummary(run),
    first_error: benchmarkFailures([run]).firstError,
  }
}

export function createBenchmarkReport(
  runs: readonly BenchmarkRun[],
  metadata: { kinferenceVersion: string; nodeVersion: string; platform: string },
  args: Record<string, unknown> = {},
): BenchmarkReport {
  return {
    metadata: {
      version: benchmarkReportVersion,
      kinference_version: metadata.kinferenceVersion,
      node_version: metadata.nodeVersion,
      platform: metadata.platform,
    },
    args,
    benchmarks: runs.map(toReportEntry),
  }
}

/** The benchmarks grouped by workload, in order of first appearance. */
export function groupByWorkload(
  entries: readonly BenchmarkReportEntry[],
): Map<string, BenchmarkReportEntry[]> {
  const groups = new Map<string, BenchmarkReportEntry[]>()
  for (const entry of entries) {
    const group = groups.get(entry.config.workload) ?? []
    group.push(entry)
    groups.set(entry.config.workload, group)
  }
  return groups
}

/** A workload name as a file name: anything but letters, digits, '.', '_' and '-' becomes '-'. */
export function toFileStem(name: string): string {
  const stem = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '')
  return stem.length > 0 ? stem : 'workload'
}

async function packageVersion(): Promise<string> {
  const text = await readFile(new URL('../../../package.json', import.meta.url), 'utf8')
  return (JSON.parse(text) as { version?: string }).version ?? 'unknown'
}

/**
 * Writes `benchmarks.json` (GuideLLM's report shape), `benchmarks.md` (one table per
 * workload) and one `<workload>.svg` chart per workload into `outputDir` (created if
 * needed). Returns the paths written, in that order.
 */
export async function writeBenchmarkReports(
  runs: readonly BenchmarkRun[],
  outputDir: string,
  options: BenchmarkReportOptions = {},
): Promise<string[]> {
  const report = createBenchmarkReport(
    runs,
    {
      kinferenceVersion: options.kinferenceVersion ?? (await packageVersion()),
      nodeVersion: process.version,
      platform: `${process.platform}-${process.arch}`,
    },
    options.args,
  )
  await mkdir(outputDir, { recursive: true })
  const written: string[] = []
  const write = async (name: string, text: string) => {
    const path = join(outputDir, name)
    await writeFile(path, text)
    written.push(path)
  }
  await write('benchmarks.json', `${JSON.stringify(report, null, 2)}\n`)
  const groups = groupByWorkload(report.benchmarks)
  const tables = renderBenchmarkMarkdown(groups)
  await write(
    'benchmarks.md',
    options.summaryMarkdown ? `${options.summaryMarkdown}\n${tables}` : tables,
  )
  const stems = new Set<string>()
  for (const [workload, entries] of groups) {
    let stem = toFileStem(workload)
    for (let n = 2; stems.has(stem); n++) stem = `${toFileStem(workload)}-${n}`
    stems.add(stem)
    await write(
      `${stem}.svg`,
      renderBenchmarkChart(workload, entries, chartBounds(entries, options.bounds?.get(workload))),
    )
  }
  return written
}

/**
 * The chart's dashed lines: the zero-queue floor's median, and the fluid bound as output
 * tokens/s (its requests/s times the runs' mean output tokens per request).
 */
function chartBounds(
  entries: readonly BenchmarkReportEntry[],
  bounds: WorkloadBounds | undefined,
): ChartBounds {
  if (!bounds) return {}
  const outputs = entries.map((e) => e.metrics.output_token_count.successful.mean)
  const meanOutput = outputs.length > 0 ? outputs.reduce((a, b) => a + b, 0) / outputs.length : 0
  return {
    ttftFloorS: bounds.floor ? bounds.floor.medianMs / 1000 : null,
    outputTokensPerSecond: bounds.fluidRps != null ? bounds.fluidRps * meanOutput : null,
  }
}
