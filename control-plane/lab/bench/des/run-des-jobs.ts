import { loadSimModelAssets } from '../../sim/sim-model-assets.ts'
import type { BenchmarkRun } from '../request-record.ts'
import { createDesPool } from './create-des-pool.ts'
import { type DesJob, runDesJob } from './des-job.ts'

export interface DesJobsOptions {
  /** Worker threads; 1 runs in this thread's stead in one worker. */
  threads: number
  onStart?: (index: number) => void
  onProgress?: (index: number, done: number) => void
  onDone?: (index: number, run: BenchmarkRun) => void
}

/**
 * Runs independent discrete-event benchmarks on worker threads, each taking the next job
 * when it finishes one. Every job is deterministic on its own, so the runs (returned in
 * job order) do not depend on how many threads there were or which ran what.
 */
export async function runDesJobs(
  jobs: readonly DesJob[],
  options: DesJobsOptions,
): Promise<BenchmarkRun[]> {
  const threads = Math.max(1, Math.min(options.threads, jobs.length))
  // One at a time gains nothing from a worker, and a big run's records would be copied.
  if (threads === 1) return runHere(jobs, options)
  const pool = createDesPool(threads)
  try {
    return await Promise.all(
      jobs.map(async (job, index) => {
        options.onStart?.(index)
        const run = await pool.run(job, (done) => options.onProgress?.(index, done))
        options.onDone?.(index, run)
        return run
      }),
    )
  } finally {
    await pool.close()
  }
}

async function runHere(jobs: readonly DesJob[], options: DesJobsOptions): Promise<BenchmarkRun[]> {
  const assets = loadSimModelAssets()
  const runs: BenchmarkRun[] = []
  for (const [index, job] of jobs.entries()) {
    options.onStart?.(index)
    const run = await runDesJob(job, assets, (done) => options.onProgress?.(index, done))
    options.onDone?.(index, run)
    runs.push(run)
  }
  return runs
}
