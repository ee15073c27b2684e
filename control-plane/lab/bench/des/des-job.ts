import { gpuProfiles } from '../../../../shared/gpu/gpu-profile.ts'
import type { StrategyRegistry } from '../../../../shared/routing/strategies/define-strategy.ts'
import type { SimKvEventsOptionsInput } from '../../sim/engine/kv-events-options.ts'
import type { SimModelAssets } from '../../sim/sim-model-assets.ts'
import { benchPoolSpec } from '../bench-pool-spec.ts'
import { createChatFrame } from '../chat-prompt-ids.ts'
import { createBenchWorkload } from '../create-bench-workload.ts'
import { profileFor } from '../load-profile.ts'
import type { BenchmarkRun } from '../request-record.ts'
import type { DesAdmissionOptionsInput } from './des-admission.ts'
import type { DesTimingOptionsInput } from './des-timing-options.ts'
import { runDesBenchmark } from './run-des-benchmark.ts'

/** One discrete-event benchmark, as plain data (it crosses to worker threads). */
export interface DesJob {
  workloadName: string
  data: string
  profile: string
  rate: number | null
  router: string
  maxRequests: number
  pods: number
  gpuProfile: string
  seed: number
  /** Scorer replicas sharing the index (default 1). */
  replicas?: number
  /** Event delay, scrape interval and lag, network; the defaults where unset. */
  timing?: DesTimingOptionsInput
  /** A trace replay's first request (data trace:FILE). */
  traceOffset?: number
  /** The pods' KV-event variants of vLLM (a hybrid model, a CPU tier, …); the defaults where unset. */
  kvEvents?: SimKvEventsOptionsInput
  /** Objectives, admission and bursting; absent: every request goes to the pool. */
  admission?: DesAdmissionOptionsInput
}

/**
 * Runs one job; the same job gives the same run wherever it runs. Its router is one of the
 * built-in strategies unless `strategies` registers more (in this thread: a registry does
 * not cross to worker threads).
 */
export async function runDesJob(
  job: DesJob,
  assets: SimModelAssets,
  onProgress?: (done: number) => void,
  strategies?: StrategyRegistry,
): Promise<BenchmarkRun> {
  const profile = gpuProfiles[job.gpuProfile]
  if (!profile) throw new Error(`unknown GPU profile ${job.gpuProfile}`)
  const frame = createChatFrame(assets.tokenizer)
  const run = await runDesBenchmark({
    pods: job.pods,
    gpuProfile: profile,
    pool: benchPoolSpec(job.router, job.gpuProfile, strategies),
    workload: await createBenchWorkload(job.data, {
      seed: job.seed,
      vocabulary: assets.vocabulary,
      frame,
      maxModelLen: profile.model.maxModelLen,
      maxRequests: job.maxRequests,
      ...(job.traceOffset !== undefined && { traceOffset: job.traceOffset }),
    }),
    workloadName: job.workloadName,
    dataSpec: job.data,
    load: profileFor(job.profile, job.rate),
    maxRequests: job.maxRequests,
    seed: job.seed,
    frame,
    vocabulary: assets.vocabulary,
    ...job.timing,
    ...(job.replicas !== undefined ? { replicas: job.replicas } : {}),
    ...(job.kvEvents !== undefined ? { kvEvents: job.kvEvents } : {}),
    ...(job.admission !== undefined ? { admission: job.admission } : {}),
    ...(onProgress ? { onProgress } : {}),
    ...(strategies ? { strategies } : {}),
  })
  // A benchmark router may be a variant of a strategy (dynamo-lmetric): reports name the router.
  return { ...run, config: { ...run.config, router: job.router } }
}
