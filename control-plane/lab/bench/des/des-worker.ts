import { parentPort } from 'node:worker_threads'
import { loadSimModelAssets } from '../../sim/sim-model-assets.ts'
import { computeBenchmarkMetrics } from '../compute-benchmark-metrics.ts'
import { type DesJob, runDesJob } from './des-job.ts'

/** A worker thread of runDesJobs: loads the model assets once, then runs the jobs it is sent. */
const port = parentPort
if (port) {
  const assets = loadSimModelAssets()
  port.on('message', async (message: { index: number; job: DesJob }) => {
    try {
      const run = await runDesJob(message.job, assets, (done) =>
        port.postMessage({ kind: 'progress', index: message.index, done }),
      )
      // Summarizing a run costs about as much as simulating it: do it here, in parallel.
      const metrics = computeBenchmarkMetrics(run)
      port.postMessage({ kind: 'done', index: message.index, run, metrics })
    } catch (error) {
      port.postMessage({ kind: 'failed', index: message.index, message: (error as Error).message })
    }
  })
  port.postMessage({ kind: 'ready' })
}
