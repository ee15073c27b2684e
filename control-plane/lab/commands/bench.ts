import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type CliIo, exitCode } from '../../kinfctl/cli-io.ts'
import { defaultBenchPods } from '../bench/bench-presets.ts'
import { benchmarkFailures, everyRequestFailed } from '../bench/benchmark-failures.ts'
import { createChatFrame } from '../bench/chat-prompt-ids.ts'
import { renderBenchmarkMarkdown } from '../bench/render-benchmark-markdown.ts'
import type { BenchmarkRun } from '../bench/request-record.ts'
import { type MatrixWorkload, runBenchmarkMatrix } from '../bench/run-benchmark-matrix.ts'
import { runRoutingSuite } from '../bench/suite/routing/run-routing-suite.ts'
import { runSloSuite } from '../bench/suite/slo/run-slo-suite.ts'
import { runTargetsSuite } from '../bench/suite/targets/run-targets-suite.ts'
import { type TargetCheck, tallyTargets } from '../bench/suite/targets/target-verdict.ts'
import type { TargetsOptions } from '../bench/suite/targets/targets-context.ts'
import { summarizeSuite } from '../bench/summarize-suite.ts'
import { isTraceData } from '../bench/trace/load-mooncake-trace.ts'
import {
  createBenchmarkReport,
  groupByWorkload,
  writeBenchmarkReports,
} from '../bench/write-benchmark-reports.ts'
import { loadSimModelAssets, type SimModelAssets } from '../sim/sim-model-assets.ts'
import { type BenchArgs, parseBenchArgs } from './bench-args.ts'
import { type BenchGroup, planBench } from './bench-plan.ts'

export { benchUsage } from './bench-usage.ts'

export async function benchCommand(args: string[], io: CliIo): Promise<number> {
  // The entry point reads the environment; everything below is given the key.
  const parsed = parseBenchArgs(args, { apiKey: io.env.KINFERENCE_API_KEY })
  const assets = loadSimModelAssets()
  if (parsed.suite === 'targets') return targetsSuite(parsed, assets, io)
  if (parsed.suite === 'routing') return routingSuite(parsed, assets, io)
  if (parsed.suite === 'slo') return sloSuite(parsed, assets, io)
  const groups = await planBench(parsed, assets, createChatFrame(assets.tokenizer))
  const started = performance.now()
  const runs: BenchmarkRun[] = []
  for (const group of groups) runs.push(...(await runGroup(parsed, group, assets, io)))
  const seconds = (performance.now() - started) / 1000
  const workloads = groups.flatMap((g) => g.workloads)
  const presets = groups.flatMap((g) => g.presets)
  const bounds = new Map(groups.flatMap((g) => [...g.bounds]))
  const summary = presets.length > 0 ? summarizeSuite(runs, presets, bounds, parsed.sloMs) : null
  const timing = `${runs.length} benchmarks, ${runs.reduce((n, r) => n + r.records.length, 0)} requests, ${seconds.toFixed(1)} s (${parsed.mode})`
  const skipped = skippedByTrace(workloads, runs)
  const notes = traceNotes(workloads, skipped, groups)
  const written = await writeBenchmarkReports(runs, parsed.values.out, {
    args: {
      ...parsed.values,
      routers: parsed.routers,
      seeds: parsed.seeds,
      ...(Object.keys(skipped).length > 0 && { trace_skipped_requests: skipped }),
    },
    bounds,
    ...(summary ? { summaryMarkdown: `${summary.markdown}\n${timing}\n` } : {}),
    ...(!summary && notes !== '' ? { summaryMarkdown: notes } : {}),
  })
  if (summary) io.stdout(`${summary.markdown}\n`)
  else {
    const report = createBenchmarkReport(runs, {
      kinferenceVersion: '',
      nodeVersion: '',
      platform: '',
    })
    io.stdout(renderBenchmarkMarkdown(groupByWorkload(report.benchmarks)))
    for (const [name, bound] of bounds)
      if (bound.floor)
        io.stdout(
          `${name}: zero-queue floor median TTFT ${bound.floor.medianMs.toFixed(0)} ms, p90 ${bound.floor.p90Ms.toFixed(0)} ms\n`,
        )
    io.stdout(notes)
  }
  const failures = benchmarkFailures(runs)
  if (failures.failed > 0 && failures.failed < failures.total)
    io.stdout(
      `${failures.failed} of ${failures.total} requests failed; the first: ${failures.firstError}\n`,
    )
  io.stdout(`${timing}\nwrote ${written.join(', ')}\n`)
  // Reports are written either way; a live run in which nothing succeeded measured nothing
  // but the target's refusal (a DES run whose admission refused everything measured that).
  const failed = parsed.mode === 'live' ? everyRequestFailed(failures) : null
  if (failed) throw failed
  return exitCode.ok
}

/** One GPU profile's and pool size's workloads, every seed, side by side. */
async function runGroup(
  parsed: BenchArgs,
  group: BenchGroup,
  assets: SimModelAssets,
  io: CliIo,
): Promise<BenchmarkRun[]> {
  const runs: BenchmarkRun[] = []
  for (const seed of parsed.seeds)
    runs.push(
      ...(await runBenchmarkMatrix({
        mode: parsed.mode,
        workloads: group.workloads,
        routers: parsed.routers,
        pods: group.pods,
        profile: group.profile,
        seed,
        assets,
        target: parsed.values.target ?? null,
        ...(parsed.apiKey !== null && { headers: { authorization: `Bearer ${parsed.apiKey}` } }),
        timeScale: parsed.timeScale,
        progress: { write: io.stderr, isTTY: io.stderrIsTty ?? false },
        threads: parsed.threads,
        desTiming: parsed.desTiming,
        replicas: parsed.replicas[0] ?? 1,
        ...(parsed.admission ? { admission: parsed.admission } : {}),
      })),
    )
  return runs
}

/** The options of the targets and slo suites, from the command line. */
function suiteOptions(
  parsed: BenchArgs,
  assets: SimModelAssets,
  io: CliIo,
  replicas: number[],
): TargetsOptions {
  return {
    seeds: parsed.seeds,
    routers: parsed.routers,
    replicas,
    pods: parsed.pods ?? defaultBenchPods,
    threads: parsed.threads,
    assets,
    requestScale: parsed.requestScale,
    desTiming: parsed.desTiming,
    log: (line) => io.stderr(`${line}\n`),
  }
}

/** Runs a suite of targets and writes its report, with the tally and the time taken, to `file`. */
async function reportSuite(
  parsed: BenchArgs,
  io: CliIo,
  file: string,
  run: () => Promise<{ markdown: string; targets: TargetCheck[] }>,
): Promise<number> {
  const started = performance.now()
  const report = await run()
  const seconds = (performance.now() - started) / 1000
  const footer = `${tallyTargets(report.targets)}; ${seconds.toFixed(0)} s (des)\n`
  await mkdir(parsed.values.out, { recursive: true })
  const path = join(parsed.values.out, file)
  await writeFile(path, `${report.markdown}\n${footer}`)
  io.stdout(`${report.markdown}\n${footer}wrote ${path}\n`)
  return exitCode.ok
}

const targetsSuite = (parsed: BenchArgs, assets: SimModelAssets, io: CliIo) =>
  reportSuite(parsed, io, 'targets.md', () =>
    runTargetsSuite(suiteOptions(parsed, assets, io, parsed.replicas)),
  )

const sloSuite = (parsed: BenchArgs, assets: SimModelAssets, io: CliIo) =>
  reportSuite(parsed, io, 'slo.md', () => runSloSuite(suiteOptions(parsed, assets, io, [1])))

async function routingSuite(parsed: BenchArgs, assets: SimModelAssets, io: CliIo): Promise<number> {
  const workloads = parsed.routingWorkloads
  const started = performance.now()
  const report = await runRoutingSuite({
    seeds: parsed.seeds,
    routers: parsed.routers,
    pods: parsed.pods,
    threads: parsed.threads,
    assets,
    requestScale: parsed.requestScale,
    desTiming: parsed.desTiming,
    ...(workloads ? { workloads } : {}),
    log: (line) => io.stderr(`${line}\n`),
  })
  const seconds = (performance.now() - started) / 1000
  const footer = `${report.json.tally}; ${seconds.toFixed(0)} s (des)\n`
  await mkdir(parsed.values.out, { recursive: true })
  const markdown = join(parsed.values.out, 'benchmarks.md')
  const json = join(parsed.values.out, 'targets.json')
  await writeFile(markdown, `${report.markdown}\n${footer}`)
  await writeFile(json, `${JSON.stringify({ ...report.json, seconds }, null, 2)}\n`)
  io.stdout(`${report.markdown}\n${footer}wrote ${markdown}, ${json}\n`)
  return exitCode.ok
}

function skippedByTrace(
  workloads: readonly MatrixWorkload[],
  runs: readonly BenchmarkRun[],
): Record<string, number> {
  return Object.fromEntries(
    workloads
      .filter((workload) => isTraceData(workload.data))
      .map((workload) => [
        workload.name,
        runs.find((r) => r.config.workload === workload.name)?.skippedRequests ?? 0,
      ]),
  )
}

/** One line per trace workload: the slice and how many of its requests were skipped. */
function traceNotes(
  workloads: readonly MatrixWorkload[],
  skipped: Record<string, number>,
  groups: readonly BenchGroup[],
): string {
  const contextOf = (name: string) =>
    groups.find((g) => g.workloads.some((w) => w.name === name))?.profile.model.maxModelLen
  return workloads
    .filter((workload) => isTraceData(workload.data))
    .map((workload) => {
      const offset = workload.traceOffset ?? 0
      return `${workload.name}: ${workload.data} requests ${offset} to ${offset + workload.maxRequests - 1}, ${skipped[workload.name] ?? 0} skipped (prompt and output over the ${contextOf(workload.name)}-token context)\n`
    })
    .join('')
}
