import type { BenchPreset } from '../../bench-presets.ts'
import {
  type CapacityResult,
  findCapacity,
  steadyStateRequests,
} from '../../bounds/find-capacity.ts'
import { rateGrid } from '../rate-grid.ts'
import type { RunSummary } from './run-summary.ts'
import { sloTtftMs } from './run-summary.ts'
import type { Probe, TargetsContext } from './targets-context.ts'

/** Every router × seed at one load of one workload. */
export interface ScenarioRuns {
  scenario: string
  preset: BenchPreset
  replicas: number
  rate: number
  runs: RunSummary[]
}

/** Capacity by bisection for one router and seed, with the run at that capacity. */
export interface CapacityOutcome {
  preset: BenchPreset
  router: string
  seed: number
  replicas: number
  result: CapacityResult
  atCapacity: RunSummary | null
  fluidRps: number
}

/** Lowest and highest rate bisection starts from, as fractions of the fluid bound. */
const bracket = { low: 0.125, high: 1 }

/**
 * The highest Poisson rate, never above the fluid bound, whose run is in steady state
 * (baseline-stability.ts: no TTFT trend across its thirds, its arrivals served) with p90
 * TTFT ≤ 2 s and ≥ 98% of the requests complete within the run (finished by the last
 * arrival plus the slowest early request's e2e: run-summary.ts), by bisection from the
 * fluid bound down. Each run spans at least 600 requests and 180 s of arrivals, scaled by
 * the suite's request scale (steadyStateRequests), whatever the preset's request count;
 * the bound is that of the longest such run's requests (the ceiling's own stream).
 */
export async function measureCapacity(
  ctx: TargetsContext,
  preset: BenchPreset,
  router: string,
  seed: number,
  replicas: number,
): Promise<CapacityOutcome> {
  const requestsAt = (rate: number) =>
    Math.max(ctx.requestsOf(preset), steadyStateRequests(rate, ctx.requestScale))
  // The bound of the stream the runs near it carry: a longer stream amortizes its cold
  // misses, so its bound is higher than the preset's (10.4 against 9.8 req/s on
  // shared-prefix at 1,800 requests against 600).
  const presetRps = (await ctx.bounds(preset, seed)).fluid.requestsPerSecond
  const fluidRps = (await ctx.bounds(preset, seed, requestsAt(presetRps))).fluid.requestsPerSecond
  const byRate = new Map<number, RunSummary>()
  const result = await findCapacity(
    async (rate) => {
      const maxRequests = requestsAt(rate)
      const summary = await ctx.run({
        preset,
        router,
        seed,
        replicas,
        rate,
        profile: 'poisson',
        maxRequests,
      })
      byRate.set(rate, summary)
      return {
        p90TtftMs: Number.isFinite(summary.ttftP90S) ? summary.ttftP90S * 1000 : Infinity,
        completedFraction: summary.completedWithinRun,
        stable: summary.stability.stable,
        why: summary.stability.why,
      }
    },
    {
      low: bracket.low * fluidRps,
      high: bracket.high * fluidRps,
      tolerance: 0.02,
      maxSteps: 10,
      maxP90TtftMs: sloTtftMs,
      ceiling: fluidRps,
    },
  )
  return {
    preset,
    router,
    seed,
    replicas,
    result,
    atCapacity: result.rate === null ? null : (byRate.get(result.rate) ?? null),
    fluidRps,
  }
}

/** Every router and seed of the context at one load. */
export async function runAtLoad(
  ctx: TargetsContext,
  scenario: string,
  probe: Omit<Probe, 'router' | 'seed'>,
  routers: readonly string[] = ctx.routers,
): Promise<ScenarioRuns> {
  const runs = await Promise.all(
    routers.flatMap((router) => ctx.seeds.map((seed) => ctx.run({ ...probe, router, seed }))),
  )
  return { scenario, preset: probe.preset, replicas: probe.replicas, rate: probe.rate, runs }
}

/** The preset's grid (one rule, bench-presets.ts), from its bounds on the first seed. */
export async function gridOf(ctx: TargetsContext, preset: BenchPreset): Promise<number[]> {
  return rateGrid(preset.profile, await ctx.bounds(preset, ctx.seeds[0] ?? 42))
}

/**
 * The lowest grid speed at which round robin's median TTFT exceeds 2 s on the first seed
 * (the Mooncake condition), or the top of the grid when none does (reported).
 */
export async function traceSpeed(
  ctx: TargetsContext,
  preset: BenchPreset,
): Promise<{ speed: number; roundRobinMedianS: number }> {
  const speeds = await gridOf(ctx, preset)
  let last = { speed: speeds.at(-1) ?? 1, roundRobinMedianS: Number.NaN }
  for (const speed of speeds) {
    const summary = await ctx.run({
      preset,
      router: 'round-robin',
      seed: ctx.seeds[0] ?? 42,
      replicas: 1,
      rate: speed,
    })
    last = { speed, roundRobinMedianS: summary.ttftMedianS }
    if (summary.ttftMedianS * 1000 > sloTtftMs) return last
  }
  return last
}
