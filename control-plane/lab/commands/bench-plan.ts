import { type GpuProfile, gpuProfiles, l40s27bFp8 } from '../../../shared/gpu/gpu-profile.ts'
import { UsageError } from '../../kinfctl/cli-io.ts'
import {
  type BenchPreset,
  benchPresets,
  defaultBenchPods,
  defaultMaxRequests,
  headlineSuite,
} from '../bench/bench-presets.ts'
import type { ChatFrame } from '../bench/chat-prompt-ids.ts'
import { computeBenchmarkMetrics } from '../bench/compute-benchmark-metrics.ts'
import { createBenchWorkload } from '../bench/create-bench-workload.ts'
import { parseDataSpec } from '../bench/data-spec.ts'
import { runDesJob } from '../bench/des/des-job.ts'
import { profileFor, streamsOf } from '../bench/load-profile.ts'
import type { MatrixWorkload } from '../bench/run-benchmark-matrix.ts'
import { matchRate } from '../bench/suite/match-rate.ts'
import { loadAt, rateGrid } from '../bench/suite/rate-grid.ts'
import { type ComputedBounds, computeWorkloadBounds } from '../bench/suite/workload-bounds.ts'
import { isTraceData } from '../bench/trace/load-mooncake-trace.ts'
import type { SimModelAssets } from '../sim/sim-model-assets.ts'
import { asUsage, type BenchArgs, positive } from './bench-args.ts'

/** Workloads that run on one GPU profile and pool size: one matrix. */
export interface BenchGroup {
  profile: GpuProfile
  pods: number
  workloads: MatrixWorkload[]
  presets: BenchPreset[]
  /** Each workload's bounds on the pool (its first seed's request stream). */
  bounds: Map<string, ComputedBounds>
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

/**
 * The rate where round robin's median TTFT matches the published one (whose rate the
 * article does not give), by bisection over the grid's span on round robin alone, so the
 * table against the targets compares like with like.
 */
async function targetRate(
  args: BenchArgs,
  preset: BenchPreset,
  profile: GpuProfile,
  assets: SimModelAssets,
  grid: readonly number[],
): Promise<number> {
  const medianAt = async (rate: number) => {
    const run = await runDesJob(
      {
        workloadName: preset.name,
        data: preset.data,
        profile: preset.profile,
        rate,
        router: 'round-robin',
        maxRequests: args.maxRequests ?? preset.maxRequests,
        pods: podsOf(args, preset),
        gpuProfile: profile.name,
        seed: args.seeds[0] as number,
        timing: args.desTiming,
      },
      assets,
    )
    return computeBenchmarkMetrics(run).time_to_first_token_ms.successful.median / 1000
  }
  const target = preset.published?.roundRobin.ttftS ?? 1
  const loadOf = (rate: number) => loadAt(preset.profile, rate)
  return (await matchRate(medianAt, target, grid[0] ?? 1, grid.at(-1) ?? 2, 8, loadOf)).rate
}

function presetsOf(args: BenchArgs): BenchPreset[] {
  const names =
    args.suite === 'headline'
      ? [...headlineSuite]
      : (args.values.preset ?? '').split(',').map((n) => n.trim())
  return names.map((name) => {
    const preset = benchPresets[name]
    if (!preset)
      throw new UsageError(
        `unknown preset "${name}" (known: ${Object.keys(benchPresets).join(', ')})`,
      )
    return preset
  })
}

function profileOf(args: BenchArgs, preset: BenchPreset | null): GpuProfile {
  return args.gpuProfile ?? gpuProfiles[preset?.gpuProfile ?? ''] ?? l40s27bFp8
}

function podsOf(args: BenchArgs, preset: BenchPreset | null): number {
  return args.pods ?? preset?.pods ?? defaultBenchPods
}

/**
 * What `kinfctl bench` will run: every workload with its rates (a preset's by the one grid
 * rule from its bounds unless --rate, --trace-speed or the preset fixes them) and bounds,
 * grouped by GPU profile and pool size. A bad trace fails here, naming its file and line.
 */
export async function planBench(
  args: BenchArgs,
  assets: SimModelAssets,
  frame: ChatFrame,
): Promise<BenchGroup[]> {
  const groups = new Map<string, BenchGroup>()
  const seed = args.seeds[0] as number
  const add = async (preset: BenchPreset | null, workload: MatrixWorkload, kind: string) => {
    const profile = profileOf(args, preset)
    const pods = podsOf(args, preset)
    const plan = await createBenchWorkload(workload.data, {
      seed,
      vocabulary: assets.vocabulary,
      frame,
      maxModelLen: profile.model.maxModelLen,
      maxRequests: workload.maxRequests,
      ...(workload.traceOffset !== undefined && { traceOffset: workload.traceOffset }),
    })
    const bounds = computeWorkloadBounds(plan, frame, profile, pods, workload.maxRequests)
    const rates: (number | null)[] =
      workload.rates.length > 0 ? [...workload.rates] : rateGrid(kind, bounds)
    if (preset?.published && workload.rates.length === 0 && args.mode === 'des') {
      const matched = await targetRate(args, preset, profile, assets, rates as number[])
      if (!rates.includes(matched)) rates.push(matched)
      rates.sort((a, b) => (a ?? 0) - (b ?? 0))
    }
    for (const rate of rates) asUsage(() => profileFor(kind, rate))
    const key = `${profile.name}/${pods}`
    const group: BenchGroup = groups.get(key) ?? {
      profile,
      pods,
      workloads: [],
      presets: [],
      bounds: new Map(),
    }
    groups.set(key, group)
    group.workloads.push({ ...workload, rates })
    if (preset) group.presets.push(preset)
    group.bounds.set(workload.name, bounds)
  }
  const data = args.values.data
  if (data !== undefined) {
    const kind = args.values.profile ?? (isTraceData(data) ? 'trace' : 'poisson')
    await add(
      null,
      {
        name: args.values.name,
        data,
        profile: kind,
        rates: dataRates(data, kind, args.rates, args.values['trace-speed']),
        maxRequests: args.maxRequests ?? defaultMaxRequests,
        ...(args.traceOffset !== undefined && { traceOffset: args.traceOffset }),
        ...(args.cpuTier ? { cpuTier: args.cpuTier } : {}),
      },
      kind,
    )
    return [...groups.values()]
  }
  for (const preset of presetsOf(args)) {
    const kind = args.values.profile ?? preset.profile
    const speeds = args.values['trace-speed']
    const given =
      kind === 'trace' && speeds !== undefined
        ? dataRates(preset.data, kind, undefined, speeds)
        : args.rates
    await add(
      preset,
      {
        name: preset.name,
        data: preset.data,
        profile: kind,
        rates: given ?? preset.rates ?? [],
        maxRequests: args.maxRequests ?? preset.maxRequests,
        ...((args.cpuTier ?? preset.cpuTier) ? { cpuTier: args.cpuTier ?? preset.cpuTier } : {}),
      },
      kind,
    )
  }
  return [...groups.values()]
}
