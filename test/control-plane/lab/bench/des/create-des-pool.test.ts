import { describe, expect, it } from 'vitest'
import { createDesPool } from '../../../../../control-plane/lab/bench/des/create-des-pool.ts'
import type { DesJob } from '../../../../../control-plane/lab/bench/des/des-job.ts'
import { runDesJobs } from '../../../../../control-plane/lab/bench/des/run-des-jobs.ts'

const job = (router: string, rate: number): DesJob => ({
  workloadName: 'tiny',
  data: 'prefix_count=2,prefix_tokens=256,prompt_tokens=64,output_tokens=8',
  profile: 'poisson',
  rate,
  router,
  maxRequests: 12,
  pods: 2,
  gpuProfile: 'l40s-27b-fp8',
  seed: 7,
})

const shape = (run: {
  records: { id: string; pod: string | null; firstTokenMs: number | null }[]
}) => run.records.map((r) => [r.id, r.pod, r.firstTokenMs])

describe('createDesPool', () => {
  it('runs jobs submitted at any time, each as it would run alone', async () => {
    const jobs = [job('kinference', 2), job('round-robin', 4), job('kinference', 8)]
    const alone = await runDesJobs(jobs, { threads: 1 })
    const pool = createDesPool(2)
    try {
      const first = pool.run(jobs[0] as DesJob)
      // Submitted after the first one finished: a bisection's next probe.
      const later = await first.then(() =>
        Promise.all([pool.run(jobs[2] as DesJob), pool.run(jobs[1] as DesJob)]),
      )
      expect(shape(await first)).toEqual(shape(alone[0] as never))
      expect(shape(later[0])).toEqual(shape(alone[2] as never))
      expect(shape(later[1])).toEqual(shape(alone[1] as never))
    } finally {
      await pool.close()
    }
  }, 60_000)

  it('rejects a job that fails, with its reason, and keeps running others', async () => {
    const pool = createDesPool(1)
    try {
      await expect(
        pool.run({ ...job('kinference', 2), gpuProfile: 'no-such-gpu' }),
      ).rejects.toThrow(/benchmark 1 failed: unknown GPU profile no-such-gpu/)
      const run = await pool.run(job('round-robin', 2))
      expect(run.records).toHaveLength(12)
    } finally {
      await pool.close()
    }
  }, 60_000)
})
