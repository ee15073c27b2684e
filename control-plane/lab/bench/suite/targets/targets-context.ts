import { gpuProfiles } from '../../../../../shared/gpu/gpu-profile.ts'
import type { SimModelAssets } from '../../../sim/sim-model-assets.ts'
import type { BenchPreset } from '../../bench-presets.ts'
import { type ChatFrame, createChatFrame } from '../../chat-prompt-ids.ts'
import { createBenchWorkload } from '../../create-bench-workload.ts'
import { createDesPool, type DesPool } from '../../des/create-des-pool.ts'
import type { DesAdmissionOptionsInput } from '../../des/des-admission.ts'
import type { DesJob } from '../../des/des-job.ts'
import type { DesTimingOptionsInput } from '../../des/des-timing-options.ts'
import { cpuTierEvents } from '../../run-benchmark-matrix.ts'
import { type ComputedBounds, computeWorkloadBounds, tieredHitCeiling } from '../workload-bounds.ts'
import { type RunSummary, summarizeRun } from './run-summary.ts'

export interface TargetsOptions {
  seeds: readonly number[]
  routers: readonly string[]
  /** Scorer replicas to judge under: 1, and 3 for the replica targets. */
  replicas: readonly number[]
  pods: number
  threads: number
  assets: SimModelAssets
  /**
   * Multiplies every scenario's request count: 1 is the suite as the issue states it; CI's
   * smoke run takes a small fraction, which exercises every path but judges nothing.
   */
  requestScale: number
  desTiming?: DesTimingOptionsInput
  log?: (line: string) => void
}

/** One benchmark of the suite, as its targets read it. */
export interface Probe {
  preset: BenchPreset
  router: string
  seed: number
  replicas: number
  rate: number
  /** Overrides the preset's profile (overload-open runs shared-prefix data open loop). */
  profile?: string
  /** Overrides the preset's (scaled) request count. */
  maxRequests?: number
  /** Overrides the suite's DES timing (the stale-index scenario). */
  timing?: DesTimingOptionsInput
  /** Objectives, admission and bursting (the SLO suite); absent: none. */
  admission?: DesAdmissionOptionsInput
  /** The pods' CPU tier as a multiple of their GPU's KV blocks; absent: the preset's. */
  cpuTier?: number
}

export interface TargetsContext extends TargetsOptions {
  frame: ChatFrame
  /** The preset's request count, scaled (at least 24). */
  requestsOf(preset: BenchPreset): number
  /**
   * The preset's bounds on the pool, for a seed (cached), over its first `count` requests
   * (default: the preset's scaled request count).
   */
  bounds(preset: BenchPreset, seed: number, count?: number): Promise<ComputedBounds>
  /** The preset's capacity hit ceiling with a CPU tier `cpuMultiple` x the GPU's (tieredHitCeiling). */
  tieredCeiling(preset: BenchPreset, seed: number, cpuMultiple: number): Promise<number>
  /** Runs one benchmark on the pool's workers and keeps its summary. */
  run(probe: Probe): Promise<RunSummary>
  close(): Promise<void>
}

export function createTargetsContext(options: TargetsOptions): TargetsContext {
  const frame = createChatFrame(options.assets.tokenizer)
  const pool: DesPool = createDesPool(options.threads)
  const bounds = new Map<string, Promise<ComputedBounds>>()
  const requestsOf = (preset: BenchPreset) =>
    Math.max(24, Math.round(preset.maxRequests * options.requestScale))
  const profileOf = (preset: BenchPreset) => {
    const name = preset.gpuProfile ?? 'l40s-27b-fp8'
    const profile = gpuProfiles[name]
    if (!profile) throw new Error(`preset ${preset.name}: unknown GPU profile ${name}`)
    return profile
  }
  return {
    ...options,
    frame,
    requestsOf,
    bounds(preset, seed, count = requestsOf(preset)) {
      const key = `${preset.name}@${seed}×${count}`
      let found = bounds.get(key)
      if (!found) {
        const profile = profileOf(preset)
        found = createBenchWorkload(preset.data, {
          seed,
          vocabulary: options.assets.vocabulary,
          frame,
          maxModelLen: profile.model.maxModelLen,
          maxRequests: count,
        }).then((workload) => computeWorkloadBounds(workload, frame, profile, options.pods, count))
        bounds.set(key, found)
      }
      return found
    },
    async tieredCeiling(preset, seed, cpuMultiple) {
      const profile = profileOf(preset)
      const count = requestsOf(preset)
      const workload = await createBenchWorkload(preset.data, {
        seed,
        vocabulary: options.assets.vocabulary,
        frame,
        maxModelLen: profile.model.maxModelLen,
        maxRequests: count,
      })
      return tieredHitCeiling(workload, frame, profile, options.pods, count, cpuMultiple)
    },
    async run(probe) {
      const cpuTier = probe.cpuTier ?? probe.preset.cpuTier ?? 0
      const job: DesJob = {
        workloadName: probe.preset.name,
        data: probe.preset.data,
        profile: probe.profile ?? probe.preset.profile,
        rate: probe.rate,
        router: probe.router,
        maxRequests: probe.maxRequests ?? requestsOf(probe.preset),
        pods: options.pods,
        gpuProfile: profileOf(probe.preset).name,
        seed: probe.seed,
        replicas: probe.replicas,
        ...(options.desTiming || probe.timing
          ? { timing: { ...options.desTiming, ...probe.timing } }
          : {}),
        ...(probe.admission ? { admission: probe.admission } : {}),
        ...(cpuTier > 0 ? { kvEvents: cpuTierEvents(cpuTier, profileOf(probe.preset)) } : {}),
      }
      const started = performance.now()
      const summary = summarizeRun(await pool.run(job), frame)
      options.log?.(
        `${probe.preset.name} ${job.profile}@${probe.rate} ${probe.router} seed ${probe.seed}` +
          `${probe.replicas > 1 ? ` ×${probe.replicas} replicas` : ''}: median TTFT ` +
          `${summary.ttftMedianS.toFixed(3)} s (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      )
      return summary
    },
    close: () => pool.close(),
  }
}
