import { describe, expect, it } from 'vitest'
import { type DesJob, runDesJob } from '../../../../../control-plane/lab/bench/des/des-job.ts'
import { loadSimModelAssets } from '../../../../../control-plane/lab/sim/sim-model-assets.ts'

const assets = loadSimModelAssets()

const job = (router: string, replicas?: number): DesJob => ({
  workloadName: 'tiny',
  data: 'prefix_count=4,prefix_tokens=1024,prompt_tokens=128,output_tokens=32',
  profile: 'poisson',
  rate: 6,
  router,
  maxRequests: 60,
  pods: 3,
  gpuProfile: 'l40s-27b-fp8',
  seed: 5,
  ...(replicas !== undefined ? { replicas } : {}),
})

const trace = (run: Awaited<ReturnType<typeof runDesJob>>) =>
  run.records.map((r) => [r.id, r.pod, r.firstTokenMs, r.endMs, r.cachedTokens])

describe('scorer replicas in the DES', () => {
  it('one replica is the run without replicas, request for request', async () => {
    for (const router of ['kinference', 'round-robin', 'gie-default']) {
      const plain = await runDesJob(job(router), assets)
      const one = await runDesJob(job(router, 1), assets)
      expect(trace(one)).toEqual(trace(plain))
      expect(one.config.replicas).toBeUndefined()
    }
  })

  it('each replica keeps its own state: three round robins interleave differently from one', async () => {
    const one = await runDesJob(job('round-robin', 1), assets)
    const three = await runDesJob(job('round-robin', 3), assets)
    expect(three.config.replicas).toBe(3)
    const pods = (run: typeof one) => run.records.map((r) => r.pod)
    expect(pods(three)).not.toEqual(pods(one))
    // One round robin alternates strictly; three independent ones cannot.
    const sequence = pods(one)
    expect(sequence.every((pod, i) => i === 0 || pod !== sequence[i - 1])).toBe(true)
    const spread = new Map<string, number>()
    for (const pod of pods(three)) spread.set(pod as string, (spread.get(pod as string) ?? 0) + 1)
    expect([...spread.values()].every((n) => n >= 10)).toBe(true)
  })

  it('is deterministic for a seed, and replicas share the index: later requests still hit', async () => {
    const a = await runDesJob(job('kinference', 3), assets)
    const b = await runDesJob(job('kinference', 3), assets)
    expect(trace(a)).toEqual(trace(b))
    const cached = a.records.filter((r) => r.cachedTokens >= 1024).length
    expect(cached).toBeGreaterThan(a.records.length / 2)
  })
})

describe('a stale index in the DES', () => {
  it('losing KV events leaves the precise routers blind to what the pods hold', async () => {
    const hits = (run: Awaited<ReturnType<typeof runDesJob>>) =>
      run.records.reduce((n, r) => n + r.cachedTokens, 0)
    const plain = await runDesJob(job('llmd-sticky-precise'), assets)
    const zero = await runDesJob(
      { ...job('llmd-sticky-precise'), timing: { eventLossRate: 0 } },
      assets,
    )
    expect(trace(zero)).toEqual(trace(plain))
    // 40 prefixes of 4096 tokens: more than one pod holds, less than the pool does.
    const wide = {
      ...job('llmd-sticky-precise'),
      data: 'prefix_count=40,prefix_tokens=4096,prompt_tokens=128,output_tokens=32',
      maxRequests: 240,
      rate: 4,
    }
    const fresh = await runDesJob(wide, assets)
    const blind = await runDesJob(
      { ...wide, timing: { eventLossRate: 1, eventDelayMs: 2000 } },
      assets,
    )
    expect(hits(blind)).toBeLessThan(hits(fresh))
  })
})
