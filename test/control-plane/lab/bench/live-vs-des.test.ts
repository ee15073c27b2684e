import { describe, expect, it } from 'vitest'
import { computeBenchmarkMetrics } from '../../../../control-plane/lab/bench/compute-benchmark-metrics.ts'
import type { BenchmarkRun } from '../../../../control-plane/lab/bench/request-record.ts'
import {
  type MatrixWorkload,
  runBenchmarkMatrix,
} from '../../../../control-plane/lab/bench/run-benchmark-matrix.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'

/**
 * The benchmark harness against the same engine behind HTTP: one workload through the
 * discrete-event benchmark (the simulator's engine per pod, the scorer's routing core)
 * and, live, through the real scorer in front of simulated pods running that engine,
 * over HTTP and ZMQ on loopback. So this checks the harness (the live generator, the
 * loopback stack, the DES's stand-ins for the index, metrics and network), not the
 * engine against a GPU. They must route alike (the pods' prefix-cache hit rates) and
 * agree on TTFT within stated tolerances.
 *
 * What the live path adds is CPU time on one event loop: the generator, the scorer and
 * the pods share this process, and every request is tokenized twice (scorer and pod,
 * about 10 ms each for a 4k-token prompt), its KV events encoded and indexed, the pods'
 * metrics scraped. Each wall millisecond of that is `timeScale` modelled milliseconds,
 * and under load requests queue for the loop behind each other's work. So the gap grows
 * with the time scale and the load: round robin at 4 req/s with 4,096-token prefixes (the
 * loaded case below, 80 requests, DES median 0.72 s) measured +4% at time scale 1, +30%
 * at 2, 11× at 10 and 60× at 20 (the CLI's live default is 20: fine for short prompts,
 * not for these). None of it is the DES's mistake, and the fix (the pods off the
 * scorer's event loop) is outside the harness, so the loaded case runs at time scale 1,
 * where 60 requests measured +4% to +11% alone, and allows +25% for a busy machine. The
 * trace slice has six requests, so its median is one of them: it measured +19% and
 * allows +40%.
 */
const assets = loadSimModelAssets()

async function run(
  mode: 'des' | 'live',
  workload: MatrixWorkload,
  routers: string[],
  timeScale: number,
): Promise<Map<string, BenchmarkRun>> {
  const runs = await runBenchmarkMatrix({
    mode,
    workloads: [workload],
    routers,
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
const of = (runs: Map<string, BenchmarkRun>, router: string) => runs.get(router) as BenchmarkRun

/** One router's run of `workload` both ways. */
async function bothWays(workload: MatrixWorkload, router: string, timeScale: number) {
  const des = of(await run('des', workload, [router], timeScale), router)
  const live = of(await run('live', workload, [router], timeScale), router)
  return { des, live }
}

/** Live median TTFT within [low × DES, high × DES + plusMs]. */
function expectMedianWithin(
  runs: { des: BenchmarkRun; live: BenchmarkRun },
  low: number,
  high: number,
  plusMs: number,
) {
  const simulated = medianTtft(runs.des)
  const measured = medianTtft(runs.live)
  expect(measured).toBeGreaterThanOrEqual(low * simulated)
  expect(measured).toBeLessThanOrEqual(high * simulated + plusMs)
}

function expectAllAnswered(runs: Iterable<BenchmarkRun>, count: number) {
  for (const r of runs) {
    expect(r.records).toHaveLength(count)
    expect(r.records.every((record) => record.error === null)).toBe(true)
  }
}

describe('light load: the harness agrees with the DES (time scale 2)', () => {
  /**
   * Live median TTFT within [0.8 × DES, 1.3 × DES + 10 ms × scale]; the
   * round-robin/kinference median ratio live within a factor 1.6 of the DES's, and above
   * 1.5 in both.
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
  const routers = ['round-robin', 'kinference']
  let des: Map<string, BenchmarkRun>
  let live: Map<string, BenchmarkRun>

  it('runs the same workload both ways, every request answered', async () => {
    des = await run('des', workload, routers, timeScale)
    live = await run('live', workload, routers, timeScale)
    expectAllAnswered([...des.values(), ...live.values()], workload.maxRequests)
  }, 120_000)

  it('routes alike: the pods report the same prefix-cache hit rates', () => {
    for (const router of routers) {
      const a = hitRate(of(des, router))
      const b = hitRate(of(live, router))
      expect(Math.abs(a - b), router).toBeLessThan(0.08)
    }
    expect(hitRate(of(des, 'kinference'))).toBeGreaterThan(hitRate(of(des, 'round-robin')) + 0.1)
  })

  it('agrees on median TTFT and on the round-robin/kinference ratio', () => {
    for (const router of routers) {
      const simulated = medianTtft(of(des, router))
      const measured = medianTtft(of(live, router))
      expect(measured, router).toBeGreaterThanOrEqual(0.8 * simulated)
      expect(measured, router).toBeLessThanOrEqual(1.3 * simulated + 10 * timeScale)
    }
    const ratio = (runs: Map<string, BenchmarkRun>) =>
      medianTtft(of(runs, 'round-robin')) / medianTtft(of(runs, 'kinference'))
    expect(ratio(des)).toBeGreaterThan(1.5)
    expect(ratio(live)).toBeGreaterThan(1.5)
    expect(ratio(live) / ratio(des)).toBeGreaterThan(1 / 1.6)
    expect(ratio(live) / ratio(des)).toBeLessThan(1.6)
  })
})

describe('loaded: round robin at 4 req/s with 4,096-token prefixes (time scale 1)', () => {
  const workload = {
    name: 'loaded',
    data: 'prefix_count=32,prefix_tokens=4096,prompt_tokens=128,output_tokens=16',
    profile: 'poisson',
    rates: [4],
    maxRequests: 60,
  }
  let runs: { des: BenchmarkRun; live: BenchmarkRun }

  it('runs both ways, every request answered, the same hit rate', async () => {
    runs = await bothWays(workload, 'round-robin', 1)
    expectAllAnswered([runs.des, runs.live], workload.maxRequests)
    expect(Math.abs(hitRate(runs.des) - hitRate(runs.live))).toBeLessThan(0.03)
  }, 60_000)

  it('keeps the live median TTFT within [0.9 × DES, 1.25 × DES + 10 ms]', () => {
    // Queueing is what this case is about: the DES's median is several prefills long.
    expect(medianTtft(runs.des)).toBeGreaterThan(400)
    expectMedianWithin(runs, 0.9, 1.25, 10)
  })
})

describe('a trace slice: the Mooncake synthetic trace, both ways', () => {
  // Requests 3910 to 3921: six fit the context, four of those repeat earlier blocks.
  const workload = {
    name: 'trace',
    data: 'trace:mooncake-synthetic',
    profile: 'trace',
    rates: [1],
    maxRequests: 12,
    traceOffset: 3910,
  }
  let runs: { des: BenchmarkRun; live: BenchmarkRun }

  it('sends the same requests, skipping the same ones', async () => {
    runs = await bothWays(workload, 'kinference', 1)
    const { des, live } = runs
    expectAllAnswered([des, live], 6)
    expect(des.skippedRequests).toBe(6)
    expect(live.skippedRequests).toBe(6)
    expect(live.records.map((r) => r.promptTokens)).toEqual(des.records.map((r) => r.promptTokens))
  }, 60_000)

  it('reuses the same blocks: equal cached tokens per request, the same hit rate', () => {
    const cached = (r: BenchmarkRun) =>
      [...r.records].sort((a, b) => a.conversation - b.conversation).map((x) => x.cachedTokens)
    expect(cached(runs.live)).toEqual(cached(runs.des))
    expect(cached(runs.des).some((tokens) => tokens > 0)).toBe(true)
    expect(Math.abs(hitRate(runs.des) - hitRate(runs.live))).toBeLessThan(0.02)
  })

  it('agrees on median TTFT within [0.8 × DES, 1.4 × DES + 20 ms]', () => {
    expectMedianWithin(runs, 0.8, 1.4, 20)
  })
})
