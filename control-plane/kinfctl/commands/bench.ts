import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'
import { benchPoolSpec } from '../../bench/bench-pool-spec.ts'
import {
  allRouters,
  type BenchPreset,
  benchPresets,
  briefSuite,
  defaultMaxRequests,
  peakTtftSloMs,
} from '../../bench/bench-presets.ts'
import { createChatFrame } from '../../bench/chat-prompt-ids.ts'
import { createBenchWorkload } from '../../bench/create-bench-workload.ts'
import { parseDataSpec } from '../../bench/data-spec.ts'
import { profileFor, streamsOf } from '../../bench/load-profile.ts'
import { renderBenchmarkMarkdown } from '../../bench/render-benchmark-markdown.ts'
import type { BenchmarkRun } from '../../bench/request-record.ts'
import { type MatrixWorkload, runBenchmarkMatrix } from '../../bench/run-benchmark-matrix.ts'
import { summarizeSuite } from '../../bench/summarize-suite.ts'
import { isTraceData } from '../../bench/trace/load-mooncake-trace.ts'
import { createWorkload } from '../../bench/workload.ts'
import {
  createBenchmarkReport,
  groupByWorkload,
  writeBenchmarkReports,
} from '../../bench/write-benchmark-reports.ts'
import { type ZeroQueueFloor, zeroQueueFloor } from '../../bench/zero-queue-floor.ts'
import { loadSimModelAssets } from '../../sim/sim-model-assets.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'

export const benchUsage = `Usage: kinfctl bench [--suite brief | --preset NAMES | --data SPEC] [options]

Benchmarks routing strategies on one simulated pool, side by side at fixed loads, with
GuideLLM's synthetic data, profiles and metrics. Writes benchmarks.json (GuideLLM's
report shape), benchmarks.md and one SVG chart per workload under --out.

What to run:
      --suite brief         the brief's table: shared-prefix, multi-turn, no-prefix, every
                            router, beside the brief's numbers, with the targets checked
      --preset NAMES        named workloads (${Object.keys(benchPresets).join(', ')}), comma-separated
      --data SPEC           GuideLLM synthetic data: key=value,... (prompt_tokens,
                            output_tokens, first_prompt_tokens, first_output_tokens, each
                            with _stdev/_min/_max; prefix_count, prefix_tokens; turns) or
                            the same as JSON, which also takes prefix_buckets. Fan-out:
                            fan_out=N,fan_out_window_ms=W with prefix_tokens gives bursts
                            of N siblings within W ms sharing a prefix of their own
                            (--rate still counts requests, not bursts). Or trace:FILE, a
                            Mooncake trace (JSONL) replayed; trace:NAME is one vendored
                            in data/traces (e.g. trace:mooncake-synthetic)
      --name NAME           what reports call a --data workload (default custom)
      --profile P           synchronous, concurrent, throughput, constant, poisson,
                            trace (default poisson, trace for trace data; a preset
                            brings its own)
      --rate LIST           comma-separated: requests/s (constant, poisson) or streams
                            (concurrent, throughput); overrides a preset's rates
      --max-requests N      requests per benchmark, every turn counting (default ${defaultMaxRequests})
      --trace-speed LIST    trace: comma-separated replay speeds (timestamps ÷ speed), one
                            benchmark each, like --rate (default 1)
      --trace-offset N      trace: the first request replayed (default 0); the slice is
                            --max-requests long, minus the requests longer than the
                            model's context (skipped and counted)
How:
      --mode des|live       discrete-event simulation in virtual time (default), or HTTP
      --target URL          live: an OpenAI-compatible server (its router is what runs;
                            --routers then only labels it). Without it, live starts the
                            scorer in front of simulated pods on loopback per benchmark
      --time-scale X        live: pods run X times faster than the GPU they model; times
                            are reported in modelled time (default 20)
      --routers LIST        strategies (default all: ${allRouters.join(', ')})
      --pods N              pods in the pool (default 3)
      --gpu-profile NAME    pod profile (default l40s-27b-fp8; known: ${Object.keys(gpuProfiles).join(', ')})
      --seed S              seed of the data, arrivals and simulation (default 42)
      --slo-ms MS           median TTFT limit for peak throughput (default ${peakTtftSloMs})
      --threads N           des: benchmarks run side by side on N threads (default: the
                            cores); the results do not depend on it
      --out DIR             report folder (default results/bench)
`

/** A KinfError from checking an argument is a usage mistake (exit 2), not a failed run. */
function asUsage<T>(check: () => T): T {
  try {
    return check()
  } catch (error) {
    if (error instanceof KinfError) throw new UsageError(error.message)
    throw error
  }
}

function positive(name: string, text: string, integer: boolean): number {
  const value = Number(text)
  if (
    text.trim() === '' ||
    !Number.isFinite(value) ||
    value <= 0 ||
    (integer && !Number.isInteger(value))
  )
    throw new UsageError(
      `--${name} must be a positive ${integer ? 'integer' : 'number'}, not "${text}"`,
    )
  return value
}

export async function benchCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      suite: { type: 'string' },
      preset: { type: 'string' },
      data: { type: 'string' },
      name: { type: 'string', default: 'custom' },
      profile: { type: 'string' },
      rate: { type: 'string' },
      'max-requests': { type: 'string' },
      'trace-speed': { type: 'string' },
      'trace-offset': { type: 'string' },
      mode: { type: 'string', default: 'des' },
      target: { type: 'string' },
      'time-scale': { type: 'string', default: '20' },
      routers: { type: 'string' },
      pods: { type: 'string', default: '3' },
      'gpu-profile': { type: 'string', default: 'l40s-27b-fp8' },
      seed: { type: 'string', default: '42' },
      'slo-ms': { type: 'string', default: String(peakTtftSloMs) },
      out: { type: 'string', default: 'results/bench' },
      threads: { type: 'string' },
    },
  })
  const sources = [values.suite, values.preset, values.data].filter((v) => v !== undefined)
  if (sources.length !== 1) throw new UsageError('give exactly one of --suite, --preset, --data')
  if (values.suite !== undefined && values.suite !== 'brief')
    throw new UsageError(`unknown suite "${values.suite}" (known: brief)`)
  const mode = values.mode
  if (mode !== 'des' && mode !== 'live') throw new UsageError('--mode must be des or live')
  if (values.target !== undefined && mode !== 'live')
    throw new UsageError('--target needs --mode live')
  const profile = gpuProfiles[values['gpu-profile']]
  if (!profile) throw new UsageError(`unknown GPU profile "${values['gpu-profile']}"`)
  const pods = positive('pods', values.pods, true)
  if (pods > 1024) throw new UsageError('--pods must be at most 1024')
  const seed = Number(values.seed)
  if (!Number.isInteger(seed))
    throw new UsageError(`--seed must be an integer, not "${values.seed}"`)
  const routers = (values.routers ?? allRouters.join(','))
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean)
  if (routers.length === 0) throw new UsageError('--routers names no router')
  const rates = values.rate?.split(',').map((r) => positive('rate', r, false))
  const sloMs = positive('slo-ms', values['slo-ms'], false)
  const timeScale = positive('time-scale', values['time-scale'], false)
  const threads =
    values.threads === undefined
      ? availableParallelism()
      : positive('threads', values.threads, true)
  // Against a --target the server routes; the names only label the runs.
  if (values.target === undefined)
    for (const router of routers) asUsage(() => benchPoolSpec(router, profile.name))
  const maxRequests =
    values['max-requests'] === undefined
      ? undefined
      : positive('max-requests', values['max-requests'], true)

  const presets: BenchPreset[] = []
  const workloads: MatrixWorkload[] = []
  const traceOffset = traceOffsetOf(values['trace-offset'], values.data)
  if (values.data !== undefined) {
    const data = values.data
    const kind = values.profile ?? (isTraceData(data) ? 'trace' : 'poisson')
    const list = dataRates(data, kind, rates, values['trace-speed'])
    for (const rate of list) asUsage(() => profileFor(kind, rate))
    workloads.push({
      name: values.name,
      data: values.data,
      profile: kind,
      rates: list,
      maxRequests: maxRequests ?? defaultMaxRequests,
      ...(traceOffset !== undefined && { traceOffset }),
    })
  } else {
    const names =
      values.suite === 'brief'
        ? [...briefSuite]
        : (values.preset ?? '').split(',').map((n) => n.trim())
    for (const name of names) {
      const preset = benchPresets[name]
      if (!preset)
        throw new UsageError(
          `unknown preset "${name}" (known: ${Object.keys(benchPresets).join(', ')})`,
        )
      presets.push(preset)
      const kind = values.profile ?? preset.profile
      for (const rate of rates ?? preset.rates) asUsage(() => profileFor(kind, rate))
      workloads.push({
        name: preset.name,
        data: preset.data,
        profile: values.profile ?? preset.profile,
        rates: rates ?? preset.rates,
        maxRequests: maxRequests ?? preset.maxRequests,
      })
    }
  }

  const assets = loadSimModelAssets()
  const frame = createChatFrame(assets.tokenizer)
  // A bad trace fails here, naming its file and line, before any benchmark starts.
  for (const workload of workloads)
    if (isTraceData(workload.data))
      await createBenchWorkload(workload.data, {
        seed,
        vocabulary: assets.vocabulary,
        frame,
        maxModelLen: profile.model.maxModelLen,
        maxRequests: workload.maxRequests,
        ...(workload.traceOffset !== undefined && { traceOffset: workload.traceOffset }),
      })
  const started = performance.now()
  const runs = await runBenchmarkMatrix({
    mode,
    workloads,
    routers,
    pods,
    profile,
    seed,
    assets,
    target: values.target ?? null,
    timeScale,
    progress: { write: io.stderr, isTTY: io.stderrIsTty ?? false },
    threads,
  })
  const seconds = (performance.now() - started) / 1000
  const floors = new Map<string, ZeroQueueFloor>()
  for (const workload of workloads) {
    // A trace's requests share blocks with earlier ones in ways the floor does not model.
    if (isTraceData(workload.data)) continue
    const plan = createWorkload(parseDataSpec(workload.data), seed, assets.vocabulary)
    floors.set(workload.name, zeroQueueFloor(plan, frame, profile, workload.maxRequests))
  }
  const bounds = new Map([...floors].map(([name, floor]) => [name, { floor }]))
  const summary = presets.length > 0 ? summarizeSuite(runs, presets, bounds, sloMs) : null
  const timing = `${runs.length} benchmarks, ${runs.reduce((n, r) => n + r.records.length, 0)} requests, ${seconds.toFixed(1)} s (${mode})`
  const skipped = skippedByTrace(workloads, runs)
  const notes = traceNotes(workloads, skipped, profile.model.maxModelLen)
  const written = await writeBenchmarkReports(runs, values.out, {
    args: {
      ...values,
      routers,
      ...(Object.keys(skipped).length > 0 && { trace_skipped_requests: skipped }),
    },
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
    for (const [name, floor] of floors)
      io.stdout(
        `${name}: zero-queue floor median TTFT ${floor.medianMs.toFixed(0)} ms, p90 ${floor.p90Ms.toFixed(0)} ms\n`,
      )
    io.stdout(notes)
  }
  io.stdout(`${timing}\nwrote ${written.join(', ')}\n`)
  return exitCode.ok
}

/** --trace-offset, which only a trace takes. */
function traceOffsetOf(text: string | undefined, data: string | undefined): number | undefined {
  if (text === undefined) return undefined
  if (data === undefined || !isTraceData(data))
    throw new UsageError('--trace-offset needs --data trace:FILE')
  const offset = Number(text)
  if (text.trim() === '' || !Number.isInteger(offset) || offset < 0)
    throw new UsageError(`--trace-offset must be a non-negative integer, not "${text}"`)
  return offset
}

/**
 * The rates of a --data workload: a trace profile's are the --trace-speed list (default
 * 1); any other profile's the --rate list. Fan-out bursts need an open-loop profile.
 */
function dataRates(
  data: string,
  kind: string,
  rates: number[] | undefined,
  speeds: string | undefined,
): (number | null)[] {
  if (kind === 'trace') {
    if (!isTraceData(data)) throw new UsageError('profile trace needs --data trace:FILE')
    if (rates !== undefined) throw new UsageError('a trace replays at --trace-speed, not --rate')
    return speeds?.split(',').map((s) => positive('trace-speed', s, false)) ?? [1]
  }
  if (speeds !== undefined) throw new UsageError('--trace-speed needs --profile trace')
  const fanOut = !isTraceData(data) && asUsage(() => parseDataSpec(data)).fanOut !== undefined
  const list = rates ?? (kind === 'synchronous' ? [null] : [])
  if (list.length === 0) throw new UsageError(`profile ${kind} needs --rate`)
  if (fanOut && list.some((rate) => streamsOf(asUsage(() => profileFor(kind, rate))) !== null))
    throw new UsageError('fan_out bursts need an open-loop profile (constant, poisson)')
  return list
}

/** Requests each trace workload skipped (the same for all its runs: slice and context decide). */
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
  maxModelLen: number,
): string {
  return workloads
    .filter((workload) => isTraceData(workload.data))
    .map((workload) => {
      const offset = workload.traceOffset ?? 0
      return `${workload.name}: ${workload.data} requests ${offset} to ${offset + workload.maxRequests - 1}, ${skipped[workload.name] ?? 0} skipped (prompt and output over the ${maxModelLen}-token context)\n`
    })
    .join('')
}
