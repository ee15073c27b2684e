import { Worker } from 'node:worker_threads'
import { type BenchmarkMetrics, rememberBenchmarkMetrics } from '../compute-benchmark-metrics.ts'
import type { BenchmarkRun } from '../request-record.ts'
import type { DesJob } from './des-job.ts'

type Reply =
  | { kind: 'ready' }
  | { kind: 'progress'; index: number; done: number }
  | { kind: 'done'; index: number; run: BenchmarkRun; metrics: BenchmarkMetrics }
  | { kind: 'failed'; index: number; message: string }

interface Pending {
  index: number
  job: DesJob
  onProgress: ((done: number) => void) | undefined
  resolve: (run: BenchmarkRun) => void
  reject: (error: Error) => void
}

/** Worker threads that run DES jobs as they are submitted, each worker one job at a time. */
export interface DesPool {
  run(job: DesJob, onProgress?: (done: number) => void): Promise<BenchmarkRun>
  close(): Promise<void>
}

/**
 * A pool of `threads` DES workers (each loads the model assets once). Jobs queue in
 * submission order and go to the next idle worker; every job is deterministic on its own,
 * so a result does not depend on which worker ran it or when. Used where the next jobs
 * depend on earlier results (bisection), and by runDesJobs for a fixed list.
 */
export function createDesPool(threads: number): DesPool {
  const queue: Pending[] = []
  const busy = new Map<Worker, Pending>()
  const idle: Worker[] = []
  const workers: Worker[] = []
  let next = 0
  let failure: Error | null = null

  const pump = () => {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.pop() as Worker
      const pending = queue.shift() as Pending
      busy.set(worker, pending)
      worker.postMessage({ index: pending.index, job: pending.job })
    }
  }
  const fail = (error: Error) => {
    failure ??= error
    for (const pending of [...queue.splice(0), ...busy.values()]) pending.reject(error)
    busy.clear()
  }
  for (let i = 0; i < Math.max(1, threads); i++) {
    const worker = new Worker(new URL('./des-worker.ts', import.meta.url))
    workers.push(worker)
    worker.on('message', (reply: Reply) => {
      if (reply.kind === 'ready') {
        idle.push(worker)
        return pump()
      }
      const pending = busy.get(worker)
      if (!pending) return
      if (reply.kind === 'progress') return pending.onProgress?.(reply.done)
      busy.delete(worker)
      idle.push(worker)
      if (reply.kind === 'done') {
        rememberBenchmarkMetrics(reply.run, reply.metrics)
        pending.resolve(reply.run)
      } else pending.reject(new Error(`benchmark ${reply.index + 1} failed: ${reply.message}`))
      pump()
    })
    worker.on('error', fail)
    worker.on('exit', (code) => {
      if (code !== 0) fail(new Error(`benchmark worker exited with ${code}`))
    })
  }
  return {
    run(job, onProgress) {
      if (failure) return Promise.reject(failure)
      return new Promise<BenchmarkRun>((resolve, reject) => {
        queue.push({ index: next++, job, onProgress, resolve, reject })
        pump()
      })
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.terminate()))
    },
  }
}
