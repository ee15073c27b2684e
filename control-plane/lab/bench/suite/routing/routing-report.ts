import { type TargetCheck, tallyTargets, targetLine } from '../targets/target-verdict.ts'
import {
  capacityFractions,
  capacityMargin,
  latencySlack,
  tailFactor,
  tailFrom,
} from './rate-grid-targets.ts'
import type { RoutingOptions, WorkloadResult } from './routing-options.ts'
import {
  multiTurnMinRequests,
  multiTurnStreams,
  noRegressionFractions,
  type ScenarioOutcome,
  staleAt,
  staleTiming,
} from './routing-scenarios.ts'

export interface RoutingReport {
  markdown: string
  targets: TargetCheck[]
  /** What targets.json holds: the run's settings, every capacity and every target. */
  json: RoutingJson
}

export interface RoutingJson {
  suite: 'routing'
  seeds: number[]
  routers: string[]
  requestScale: number
  capacityDefinition: string
  workloads: {
    name: string
    pods: number
    capacity: { router: string; mean: number; min: number; max: number } | null
    capacities: {
      router: string
      seed: number
      rate: number | null
      fluidRps: number
      converged: boolean
      runs: number
    }[]
  }[]
  targets: TargetCheck[]
  tally: string
}

const pct = (f: number) => `${Math.round(f * 100)}%`

/** The report's opening: what ran, and the choices the verdicts rest on. */
function header(options: RoutingOptions, workloads: readonly WorkloadResult[]): string[] {
  const pools = workloads.map((w) => `${w.preset.name} (${w.pods} pods)`).join(', ')
  return [
    '# Kinference routing suite',
    '',
    `Discrete-event runs, seeds ${options.seeds.join(', ')} (held out from tuning, which uses 1, 2, 42), every router side by side: ${options.routers.join(', ')}. Figures are means over the seeds with their range in brackets; request scale ${options.requestScale}.`,
    '',
    `- Workloads: ${pools}. multi-turn is judged at ${multiTurnStreams} streams only (closed loop: open loop its rate would count five-turn conversations, not requests).`,
    '- Capacity: the highest Poisson rate in steady state with p90 TTFT ≤ 2 s and ≥ 98% of requests completing within the run, by bisection under the fluid bound, per router and seed (runs of at least 600 requests and 180 s of arrivals, scaled).',
    `- A workload's capacity, the grid's scale, is **the best peer's mean capacity** (kinference's own left out), so every router runs the same rates and the grid does not lean toward kinference. Grid: ${capacityFractions.map(pct).join(', ')} of it, each rate run by every router and seed with the preset's request count (scaled).`,
    `- Per rate: kinference's median TTFT, p90 TTFT and p90 e2e ≤ ${latencySlack}x the best peer's; from ${pct(tailFrom)} up, p90 TTFT ≤ ${tailFactor}x. Per workload: capacity ≥ ${capacityMargin}x the best peer's and ≥ 0.9 of the fluid bound (with the steps term).`,
    `- Multi-turn at ${multiTurnStreams} streams, max(${multiTurnMinRequests}, the preset's) requests; stale index (events ${staleTiming.eventDelayMs} ms late, ${staleTiming.eventLossRate * 100}% lost) on shared-prefix at ${pct(staleAt)} of kinference's capacity, against the fresh index on the same seeds; no regression on no-prefix and reasoning at ${noRegressionFractions.join(', ')} of their fluid bound.`,
    '',
  ]
}

export function routingReport(
  options: RoutingOptions,
  workloads: readonly WorkloadResult[],
  scenarios: readonly ScenarioOutcome[],
): RoutingReport {
  const targets = [...workloads.flatMap((w) => w.targets), ...scenarios.flatMap((s) => s.targets)]
  const markdown = [
    ...header(options, workloads),
    ...workloads.flatMap((w) => w.sections),
    ...scenarios.flatMap((s) => s.sections),
    '## Targets',
    '',
    ...targets.map(targetLine),
    '',
  ].join('\n')
  return {
    markdown,
    targets,
    json: {
      suite: 'routing',
      seeds: [...options.seeds],
      routers: [...options.routers],
      requestScale: options.requestScale,
      capacityDefinition: "the best peer's mean steady-state capacity over the seeds",
      workloads: workloads.map((w) => ({
        name: w.preset.name,
        pods: w.pods,
        capacity: w.capacity ? { router: w.capacity.router, ...w.capacity.spread } : null,
        capacities: w.outcomes.map((o) => ({
          router: o.router,
          seed: o.seed,
          rate: o.result.rate,
          fluidRps: o.fluidRps,
          converged: o.result.converged,
          runs: o.result.steps.length,
        })),
      })),
      targets,
      tally: tallyTargets(targets),
    },
  }
}
