import { formatSpread, type Spread } from '../rate-points.ts'
import type { RunSummary } from '../targets/run-summary.ts'
import type { CapacityOutcome, ScenarioRuns } from '../targets/scenario-runs.ts'
import { bestPeer, byRouter, compareWithBest, samplesOf } from '../targets/target-checks.ts'
import type { TargetCheck } from '../targets/target-verdict.ts'

/** The grid, as fractions of the workload's steady-state capacity (issue 25: 50% to 150%). */
export const capacityFractions: readonly number[] = [0.5, 0.75, 0.9, 1, 1.25, 1.5]
/** From this fraction of capacity up, p90 TTFT must also beat the best peer's by 0.8x. */
export const tailFrom = 0.9
/** kinference's capacity must be at least this multiple of the best peer's. */
export const capacityMargin = 1.1
/** kinference's latencies may exceed the best peer's by this factor at every rate. */
export const latencySlack = 1.02
/** …and its p90 TTFT must be at most this factor of it from `tailFrom` up. */
export const tailFactor = 0.8

/** The best peer's capacity, over the seeds; null when no peer was measured. */
export interface WorkloadCapacity {
  router: string
  spread: Spread
}

/**
 * A workload's capacity, the grid's scale: the best peer's mean steady-state capacity
 * (a router that passed at no rate counts 0). kinference's own is left out so the grid is
 * the same whatever kinference does and cannot be tilted toward rates that favour it.
 */
export function workloadCapacity(outcomes: readonly CapacityOutcome[]): WorkloadCapacity | null {
  const samples = outcomes.map((o) => ({ router: o.router, value: o.result.rate ?? 0 }))
  const best = bestPeer(byRouter(samples), true)
  return best && best.spread.mean > 0 ? best : null
}

/** The grid's rates (three significant digits) at `capacityFractions` of `capacityRps`. */
export function gridRates(capacityRps: number): { fraction: number; rate: number }[] {
  return capacityFractions.map((fraction) => ({
    fraction,
    rate: Number((fraction * capacityRps).toPrecision(3)),
  }))
}

const percent = (fraction: number) => `${Math.round(fraction * 100)}%`

/**
 * The targets at one rate of the grid, from every router's and seed's runs there: median
 * TTFT, p90 TTFT and p90 e2e each ≤ 1.02x the best peer's mean, and from 90% of capacity
 * up p90 TTFT ≤ 0.8x the best peer's, each judged on means over the seeds.
 */
export function rateTargets(
  workload: string,
  fraction: number,
  load: Pick<ScenarioRuns, 'rate' | 'runs'>,
): TargetCheck[] {
  const at = `${workload} at ${percent(fraction)} of capacity (${load.rate} req/s)`
  const check = (what: string, metric: (r: RunSummary) => number, factor: number) =>
    compareWithBest(`${at}: ${what} ≤ ${factor}x the best peer's`, samplesOf(load.runs, metric), {
      factor,
      unit: ' s',
    })
  const targets = [
    check('median TTFT', (r) => r.ttftMedianS, latencySlack),
    check('p90 TTFT', (r) => r.ttftP90S, latencySlack),
    check('p90 e2e', (r) => r.e2eP90S, latencySlack),
  ]
  if (fraction >= tailFrom) targets.push(check('p90 TTFT', (r) => r.ttftP90S, tailFactor))
  return targets
}

/** The grid's runs for one workload: per rate and router, the figures the targets read. */
export function gridTable(
  workload: string,
  capacity: WorkloadCapacity,
  loads: readonly { fraction: number; load: ScenarioRuns }[],
): string[] {
  const rows = [
    `### rate grid: ${workload}`,
    '',
    `Capacity ${formatSpread(capacity.spread)} req/s (${capacity.router}, the best peer); every router and seed at each rate.`,
    '',
    '| of capacity | req/s | router | median TTFT (s) | p90 TTFT (s) | p90 e2e (s) | served req/s | stable seeds |',
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const { fraction, load } of loads) {
    const columns = [
      (r: RunSummary) => r.ttftMedianS,
      (r: RunSummary) => r.ttftP90S,
      (r: RunSummary) => r.e2eP90S,
      (r: RunSummary) => r.servedRps,
    ].map((metric) => byRouter(samplesOf(load.runs, metric)))
    for (const router of columns[0]?.keys() ?? []) {
      const mine = load.runs.filter((r) => r.router === router)
      const cells = columns.map((c) => {
        const spread = c.get(router)
        return spread ? formatSpread(spread) : '–'
      })
      rows.push(
        `| ${percent(fraction)} | ${load.rate} | ${router} | ${cells.join(' | ')} | ${mine.filter((r) => r.stability.stable).length}/${mine.length} |`,
      )
    }
  }
  rows.push('')
  return rows
}
