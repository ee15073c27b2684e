import { gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'
import type { SimModelAssets } from '../../sim/sim-model-assets.ts'
import { benchPoolSpec } from '../bench-pool-spec.ts'
import { createChatFrame } from '../chat-prompt-ids.ts'
import { parseDataSpec } from '../data-spec.ts'
import { profileFor } from '../load-profile.ts'
import type { BenchmarkRun } from '../request-record.ts'
import { createWorkload } from '../workload.ts'
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
  /** Event delay, scrape interval and lag, network; the defaults where unset. */
  timing?: DesTimingOptionsInput
}

/** Runs one job; the same job gives the same run wherever it runs. */
export function runDesJob(
  job: DesJob,
  assets: SimModelAssets,
  onProgress?: (done: number) => void,
): Promise<BenchmarkRun> {
  const profile = gpuProfiles[job.gpuProfile]
  if (!profile) throw new Error(`unknown GPU profile ${job.gpuProfile}`)
  return runDesBenchmark({
    pods: job.pods,
    gpuProfile: profile,
    pool: benchPoolSpec(job.router, job.gpuProfile),
    workload: createWorkload(parseDataSpec(job.data), job.seed, assets.vocabulary),
    workloadName: job.workloadName,
    dataSpec: job.data,
    load: profileFor(job.profile, job.rate),
    maxRequests: job.maxRequests,
    seed: job.seed,
    frame: createChatFrame(assets.tokenizer),
    vocabulary: assets.vocabulary,
    ...job.timing,
    ...(onProgress ? { onProgress } : {}),
  })
}
