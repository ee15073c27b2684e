import type { BenchPreset } from '../../bench-presets.ts'
import { type CapacityOutcome, measureCapacity, runAtLoad } from '../targets/scenario-runs.ts'
import { capacityTable, capacityTargets } from '../targets/target-checks.ts'
import { createTargetsContext, type TargetsContext } from '../targets/targets-context.ts'
import {
  capacityMargin,
  gridRates,
  gridTable,
  rateTargets,
  workloadCapacity,
} from './rate-grid-targets.ts'
import type { RoutingOptions, WorkloadResult } from './routing-options.ts'
import { type RoutingReport, routingReport } from './routing-report.ts'
import {
  multiTurnScenario,
  noRegressionScenario,
  type ScenarioOutcome,
  staleIndexScenario,
} from './routing-scenarios.ts'
import { groupByPods, presetNamed, routingWorkloads } from './routing-workloads.ts'

/** Capacity by bisection, at most once per workload, router and seed in a context. */
function capacityCache(ctx: TargetsContext) {
  const cache = new Map<string, Promise<CapacityOutcome>>()
  return (preset: BenchPreset, router: string, seed: number) => {
    const key = `${preset.name}|${router}|${seed}`
    let found = cache.get(key)
    if (!found) {
      found = measureCapacity(ctx, preset, router, seed, 1)
      cache.set(key, found)
    }
    return found
  }
}

type CapacityOf = ReturnType<typeof capacityCache>

async function workloadRuns(
  ctx: TargetsContext,
  capacityOf: CapacityOf,
  preset: BenchPreset,
): Promise<WorkloadResult> {
  const outcomes = await Promise.all(
    ctx.routers.flatMap((router) => ctx.seeds.map((seed) => capacityOf(preset, router, seed))),
  )
  const capacity = workloadCapacity(outcomes)
  const base = { preset, pods: ctx.pods, outcomes, capacity }
  const sections = [capacityTable(preset.name, ` (${ctx.pods} pods)`, outcomes)]
  const targets = capacityTargets(preset.name, outcomes, capacityMargin)
  if (!capacity) {
    const detail = 'no peer passed at any rate: no grid'
    return {
      ...base,
      sections,
      targets: [...targets, { name: `${preset.name}: rate grid`, verdict: 'not met', detail }],
    }
  }
  const loads = await Promise.all(
    gridRates(capacity.spread.mean).map(async ({ fraction, rate }) => ({
      fraction,
      load: await runAtLoad(ctx, `${fraction} of capacity`, {
        preset,
        replicas: 1,
        rate,
        profile: 'poisson',
      }),
    })),
  )
  sections.push(...gridTable(preset.name, capacity, loads))
  targets.push(...loads.flatMap(({ fraction, load }) => rateTargets(preset.name, fraction, load)))
  return { ...base, sections, targets }
}

/** The scenarios beside the grid, on the default pool: multi-turn, stale index, no regression. */
function sideScenarios(ctx: TargetsContext, capacityOf: CapacityOf): Promise<ScenarioOutcome>[] {
  const shared = presetNamed('shared-prefix')
  return [
    multiTurnScenario(ctx),
    Promise.all(ctx.seeds.map((seed) => capacityOf(shared, 'kinference', seed))).then((ours) =>
      staleIndexScenario(ctx, ours),
    ),
    noRegressionScenario(ctx),
  ]
}

/**
 * The routing suite (issue 25, docs/benchmarks.md): per prefix workload, every router's
 * steady-state capacity per seed and a rate grid at 50–150% of the best peer's; then
 * multi-turn at 80 streams, a stale index and no regression. Pools of different sizes run
 * one after the other, each on its own DES workers; within one, every run is submitted at
 * once and results do not depend on the order they finish in.
 */
export async function runRoutingSuite(options: RoutingOptions): Promise<RoutingReport> {
  const presets = (options.workloads ?? routingWorkloads).map(presetNamed)
  const workloads: WorkloadResult[] = []
  const scenarios: ScenarioOutcome[] = []
  const groups = [...groupByPods(presets, options.pods)]
  for (const [index, [pods, group]] of groups.entries()) {
    const ctx = createTargetsContext({ ...options, pods, replicas: [1] })
    try {
      const capacityOf = capacityCache(ctx)
      const side = index === 0 ? sideScenarios(ctx, capacityOf) : []
      workloads.push(...(await Promise.all(group.map((p) => workloadRuns(ctx, capacityOf, p)))))
      scenarios.push(...(await Promise.all(side)))
    } finally {
      await ctx.close()
    }
  }
  const order = new Map(presets.map((p, i) => [p.name, i]))
  workloads.sort((a, b) => (order.get(a.preset.name) ?? 0) - (order.get(b.preset.name) ?? 0))
  return routingReport(options, workloads, scenarios)
}
