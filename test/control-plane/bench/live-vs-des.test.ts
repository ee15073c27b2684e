import { describe, expect, it } from 'vitest'
import { computeBenchmarkMetrics } from '../../../control-plane/bench/compute-benchmark-metrics.ts'
import type { BenchmarkRun } from '../../../control-plane/bench/request-record.ts'
import { runBenchmarkMatrix } from '../../../control-plane/bench/run-benchmark-matrix.ts'
import { loadSimModelAssets } from '../../../control-plane/sim/sim-model-assets.ts'
import { l40s27bFp8 } from '../../../shared/gpu/gpu-profile.ts'

/**
 * The simulation against the real thing: the same workload through the discrete-event
 * benchmark and, live, through the scorer in front of simulated pods over HTTP and ZMQ
 * (time scale 2). They must route alike (the pods' prefix-cache hit rates) and agree on
 * TTFT within a stated tolerance. The live path adds what the DES leaves out: the
 * scorer's and the pods' tokenization, HTTP and streaming, a few wall milliseconds per
 * request, which the time scale multiplies. Tolerance: live median TTFT within
 * [0.8 × DES, 1.3 × DES + 10 ms × scale]; the round-robin/kinference median ratio live
 * within a factor 1.6 of the DES's, and above 1.5 in both.
 */
const timeScale = 2
const workload = {
  name: 'agreement',
  // 32 prefixes of 1024 tokens: round robin warms each on every pod, kinference once.
  data: 'prefix_count=32,prefix_tokens=1024,prompt_tokens=128,output_tokens=16',
  profile: 'poisson',
  rates: [2],
  maxRequests: 60,
}
const assets = loadSimModelAssets()

async function run(mode: 'des' | 'live'): Promise<Map<string, BenchmarkRun>> {
  const runs = await runBenchmarkMatrix({
    mode,
    workloads: [workload],
    routers: ['round-robin', 'kinference'],
    pods: 3,
    profile: l40s27bFp8,
    seed: 7,
    assets,
    timeScale,
    threads: 1,
  })
  return new Map(runs.map((r) => [r.config.router, r]))
}

const medianTtft = (r: BenchmarkRun) =>
  computeBenchmarkMetrics(r).time_to_first_token_ms.successful.median
const hitRate = (r: BenchmarkRun) =>
  r.prefixCache ? r.prefixCache.hits / r.prefixCache.queries : 0

describe('live and discrete-event benchmarks agree', () => {
  let des: Map<string, BenchmarkRun>
  let live: Map<string, BenchmarkRun>

  it('runs the same workload both ways, every request answered', async () => {
    des = await run('des')
    live = await run('live')
    for (const r of [...des.values(), ...live.values()]) {
      expect(r.records).toHaveLength(workload.maxRequests)
      expect(r.records.every((record) => record.error === null)).toBe(true)
    }
  }, 120_000)

  it('routes alike: the pods report the same prefix-cache hit rates', () => {
    for (const router of ['round-robin', 'kinference']) {
      const a = hitRate(des.get(router) as BenchmarkRun)
      const b = hitRate(live.get(router) as BenchmarkRun)
      expect(Math.abs(a - b), router).toBeLessThan(0.08)
    }
    expect(hitRate(des.get('kinference') as BenchmarkRun)).toBeGreaterThan(
      hitRate(des.get('round-robin') as BenchmarkRun) + 0.1,
    )
  })

  it('agrees on median TTFT and on the round-robin/kinference ratio', () => {
    for (const router of ['round-robin', 'kinference']) {
      const simulated = medianTtft(des.get(router) as BenchmarkRun)
      const measured = medianTtft(live.get(router) as BenchmarkRun)
      expect(measured, router).toBeGreaterThanOrEqual(0.8 * simulated)
      expect(measured, router).toBeLessThanOrEqual(1.3 * simulated + 10 * timeScale)
    }
    const ratio = (runs: Map<string, BenchmarkRun>) =>
      medianTtft(runs.get('round-robin') as BenchmarkRun) /
      medianTtft(runs.get('kinference') as BenchmarkRun)
    expect(ratio(des)).toBeGreaterThan(1.5)
    expect(ratio(live)).toBeGreaterThan(1.5)
    expect(ratio(live) / ratio(des)).toBeGreaterThan(1 / 1.6)
    expect(ratio(live) / ratio(des)).toBeLessThan(1.6)
  })
})
