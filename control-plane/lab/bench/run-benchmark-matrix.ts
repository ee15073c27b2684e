import { z } from 'zod'
import { parseOptions } from '../../../shared/config/parse-options.ts'
import { type GpuProfile, numGpuBlocks } from '../../../shared/gpu/gpu-profile.ts'
import type { SimModelAssets } from '../sim/sim-model-assets.ts'
import { benchModel } from './bench-pool-spec.ts'
import { createChatFrame } from './chat-prompt-ids.ts'
import { createBenchWorkload } from './create-bench-workload.ts'
import { createProgress } from './create-progress.ts'
import type { DesAdmissionOptionsInput } from './des/des-admission.ts'
import type { DesJob } from './des/des-job.ts'
import type { DesTimingOptionsInput } from './des/des-timing-options.ts'
import { runDesJobs } from './des/run-des-jobs.ts'
import { describeProfile, profileFor } from './load-profile.ts'
import type { BenchmarkRun } from './request-record.ts'
import { LiveBenchmarkTimingOptions, runLiveBenchmark } from './run-live-benchmark.ts'
import { startLoopbackStack } from './start-loopback-stack.ts'

/** One workload to run at each of its rates. */
export interface MatrixWorkload {
  name: string
  data: string
  profile: string
  /** Rates in the profile's unit; [null] for profiles without one (synchronous). */
  rates: readonly (number | null)[]
  maxRequests: number
  /** A trace replay's first request (data trace:FILE). */
  traceOffset?: number
  /** DES: the pods' CPU tier as a multiple of their GPU's KV blocks (absent or 0: none). */
  cpuTier?: number
}

const threadsError = 'must be a positive integer'

/**
 * How the matrix runs, defaults included. A plain object, not strict: it is read out of
 * the whole MatrixOptions.
 */
export const MatrixRunOptions = z.object({
  threads: z
    .int({ error: threadsError })
    .min(1, { error: threadsError })
    .default(1)
    .describe('DES: worker threads running benchmarks side by side (results do not depend on it)'),
  // The live benchmark's own: one default for the loopback pods and the generator.
  timeScale: LiveBenchmarkTimingOptions.shape.timeScale.describe(
    'Live: how many times faster than modelled the loopback pods run (or the target pods)',
  ),
})
export type MatrixRunOptions = z.infer<typeof MatrixRunOptions>
export type MatrixRunOptionsInput = z.input<typeof MatrixRunOptions>

export interface MatrixOptions extends MatrixRunOptionsInput {
  mode: 'des' | 'live'
  workloads: readonly MatrixWorkload[]
  routers: readonly string[]
  pods: number
  profile: GpuProfile
  seed: number
  assets: SimModelAssets
  /** DES: event delay, scrape interval and lag (the defaults where unset). */
  desTiming?: DesTimingOptionsInput
  /** DES: objectives and admission (DesAdmission); absent: every request goes to the pool. */
  admission?: DesAdmissionOptionsInput
  /** DES: scorer replicas sharing the KV index (default 1). */
  replicas?: number
  /** Live: an OpenAI-compatible server; without one, a loopback stack per benchmark. */
  target?: string | null
  headers?: Record<string, string>
  /** Where progress goes, and whether it is a terminal. */
  progress?: { write: (text: string) => void; isTTY: boolean }
  log?: (message: string) => void
}

/**
 * Every workload × rate × router, one benchmark each, in that order (so a table compares
 * routers at the same load). DES: the engine and routing core in virtual time. Live:
 * the generator over HTTP against `target`, or a fresh loopback stack (simulated pods
 * and the scorer running the router) per benchmark, so each starts with cold caches.
 */
export async function runBenchmarkMatrix(input: MatrixOptions): Promise<BenchmarkRun[]> {
  const options: ParsedMatrixOptions = { ...input, ...parseMatrixRunOptions(input) }
  if (options.mode === 'des') return runDesMatrix(options)
  const runs: BenchmarkRun[] = []
  for (const workloadSpec of options.workloads) {
    const workload = await createBenchWorkload(workloadSpec.data, {
      seed: options.seed,
      vocabulary: options.assets.vocabulary,
      frame: createChatFrame(options.assets.tokenizer),
      maxModelLen: options.profile.model.maxModelLen,
      maxRequests: workloadSpec.maxRequests,
      ...(workloadSpec.traceOffset !== undefined && { traceOffset: workloadSpec.traceOffset }),
    })
    for (const rate of workloadSpec.rates) {
      const load = profileFor(workloadSpec.profile, rate)
      for (const router of options.routers) {
        const progress = options.progress
          ? createProgress({
              workload: workloadSpec.name,
              router,
              rate: describeProfile(load),
              total: workloadSpec.maxRequests,
              isTTY: options.progress.isTTY,
              write: options.progress.write,
              now: () => performance.now(),
            })
          : null
        const run = await runLive(options, router, {
          workload,
          workloadName: workloadSpec.name,
          dataSpec: workloadSpec.data,
          maxRequests: workloadSpec.maxRequests,
          seed: options.seed,
          profile: load,
          onProgress: (done: number) => progress?.update(done),
        })
        progress?.finish()
        runs.push(run)
      }
    }
  }
  return runs
}

/** MatrixOptions with the run options defaulted. */
type ParsedMatrixOptions = MatrixOptions & MatrixRunOptions

function parseMatrixRunOptions(input: MatrixRunOptionsInput): MatrixRunOptions {
  return parseOptions(MatrixRunOptions, input, 'benchmark matrix')
}

/** The jobs of a matrix, workload × rate × router, in report order. */
export function desJobsOf(options: MatrixOptions): DesJob[] {
  return options.workloads.flatMap((workload) =>
    workload.rates.flatMap((rate) =>
      options.routers.map((router) => ({
        workloadName: workload.name,
        data: workload.data,
        profile: workload.profile,
        rate,
        router,
        maxRequests: workload.maxRequests,
        pods: options.pods,
        gpuProfile: options.profile.name,
        seed: options.seed,
        ...(options.desTiming ? { timing: options.desTiming } : {}),
        ...(options.admission ? { admission: options.admission } : {}),
        ...(options.replicas && options.replicas > 1 ? { replicas: options.replicas } : {}),
        ...(workload.traceOffset !== undefined && { traceOffset: workload.traceOffset }),
        ...(workload.cpuTier ? { kvEvents: cpuTierEvents(workload.cpuTier, options.profile) } : {}),
      })),
    ),
  )
}

/** Pods with a CPU tier of `multiple` times their GPU's KV blocks (vLLM's OffloadingConnector). */
export function cpuTierEvents(multiple: number, profile: GpuProfile): DesJob['kvEvents'] {
  return {
    cpuOffload: { capacityBlocks: Math.max(1, Math.round(multiple * numGpuBlocks(profile))) },
  }
}

async function runDesMatrix(options: ParsedMatrixOptions): Promise<BenchmarkRun[]> {
  const jobs = desJobsOf(options)
  for (const job of jobs) profileFor(job.profile, job.rate)
  const total = jobs.reduce((sum, job) => sum + job.maxRequests, 0)
  const progress = options.progress
    ? createProgress({
        workload: `${jobs.length} benchmarks`,
        router: `${options.threads} threads`,
        rate: 'des',
        total,
        isTTY: options.progress.isTTY,
        write: options.progress.write,
        now: () => performance.now(),
      })
    : null
  const done = new Array<number>(jobs.length).fill(0)
  let sum = 0
  const runs = await runDesJobs(jobs, {
    threads: options.threads,
    onProgress: (index, count) => {
      sum += count - (done[index] ?? 0)
      done[index] = count
      progress?.update(sum)
    },
  })
  progress?.finish()
  return runs
}

async function runLive(
  options: ParsedMatrixOptions,
  router: string,
  common: Omit<
    Parameters<typeof runLiveBenchmark>[0],
    'target' | 'model' | 'decode' | 'routerLabel' | 'pods' | 'gpuProfile'
  >,
): Promise<BenchmarkRun> {
  const decode = (ids: readonly number[]) => options.assets.tokenizer.decode(ids)
  const base = {
    ...common,
    decode,
    routerLabel: router,
    pods: options.pods,
    gpuProfile: options.profile.name,
    timeScale: options.timeScale,
    ...(options.headers ? { headers: options.headers } : {}),
  }
  if (options.target) return runLiveBenchmark({ ...base, target: options.target, model: null })
  const stack = await startLoopbackStack({
    router,
    pods: options.pods,
    profile: options.profile,
    timeScale: options.timeScale,
    seed: options.seed,
    assets: options.assets,
    ...(options.log ? { log: options.log } : {}),
  })
  try {
    return await runLiveBenchmark({
      ...base,
      target: stack.url,
      model: benchModel,
      readPrefixCache: async () => stack.prefixCache(),
    })
  } finally {
    await stack.close()
  }
}
