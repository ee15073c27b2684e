import { Worker } from 'node:worker_threads'
import { loadSimModelAssets } from '../../sim/sim-model-assets.ts'
import { type BenchmarkMetrics, rememberBenchmarkMetrics } from '../compute-benchmark-metrics.ts'
import type { BenchmarkRun } from '../request-record.ts'
import { type DesJob, runDesJob } from './des-job.ts'

export interface DesJobsOptions {
  /** Worker threads; 1 runs in this thread's stead in one worker. */
  threads: number
  onStart?: (index: number) => void
  onProgress?: (index: number, done: number) => void
  onDone?: (index: number, run: BenchmarkRun) => void
}

type Reply =
  | { kind: 'ready' }
  | { kind: 'progress'; index: number; done: number }
  | { kind: 'done'; index: number; run: BenchmarkRun; metrics: BenchmarkMetrics }
  | { kind: 'failed'; index: number; message: string }

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
  const runs: (BenchmarkRun | undefined)[] = new Array(jobs.length)
  let next = 0
  const workers: Worker[] = []
  try {
    await Promise.all(
      Array.from({ length: threads }, () => {
        const worker = new Worker(new URL('./des-worker.ts', import.meta.url))
        workers.push(worker)
        return new Promise<void>((resolve, reject) => {
          const give = () => {
            if (next >= jobs.length) return resolve()
            const index = next++
            options.onStart?.(index)
            worker.postMessage({ index, job: jobs[index] })
          }
          worker.on('message', (reply: Reply) => {
            if (reply.kind === 'ready') give()
            else if (reply.kind === 'progress') options.onProgress?.(reply.index, reply.done)
            else if (reply.kind === 'done') {
              rememberBenchmarkMetrics(reply.run, reply.metrics)
              runs[reply.index] = reply.run
              options.onDone?.(reply.index, reply.run)
              give()
            } else reject(new Error(`benchmark ${reply.index + 1} failed: ${reply.message}`))
          })
          worker.on('error', reject)
          worker.on('exit', (code) => {
            if (code !== 0) reject(new Error(`benchmark worker exited with ${code}`))
          })
        })
      }),
    )
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()))
  }
  return runs.map((run, i) => {
    if (!run) throw new Error(`benchmark ${i + 1} produced nothing`)
    return run
  })
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
