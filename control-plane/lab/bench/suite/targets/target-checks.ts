import { formatSpread, type Spread, spreadOf } from '../rate-points.ts'
import type { RunSummary } from './run-summary.ts'
import type { CapacityOutcome, ScenarioRuns } from './scenario-runs.ts'
import { type TargetCheck, verdictOf } from './target-verdict.ts'

const ours = 'kinference'

type Metric = (run: RunSummary) => number

/** One router's figure on one seed. */
export interface Sample {
  router: string
  value: number
}

export const samplesOf = (runs: readonly RunSummary[], metric: Metric): Sample[] =>
  runs.map((run) => ({ router: run.router, value: metric(run) }))

/** Per router, the spread of its samples over the seeds run. */
export function byRouter(samples: readonly Sample[]): Map<string, Spread> {
  const groups = new Map<string, number[]>()
  for (const { router, value } of samples)
    groups.set(router, [...(groups.get(router) ?? []), value])
  return new Map([...groups].map(([router, values]) => [router, spreadOf(values)]))
}

/** The best peer by mean (lowest, or highest with `higher`), and its value. */
export function bestPeer(
  spreads: ReadonlyMap<string, Spread>,
  higher = false,
): { router: string; spread: Spread } | null {
  let best: { router: string; spread: Spread } | null = null
  for (const [router, spread] of spreads) {
    if (router === ours || !Number.isFinite(spread.mean)) continue
    const better =
      best === null || (higher ? spread.mean > best.spread.mean : spread.mean < best.spread.mean)
    if (better) best = { router, spread }
  }
  return best
}

const fmt = (spread: Spread | undefined, digits = 3) =>
  spread ? formatSpread(spread, digits) : '–'

/**
 * kinference's mean against the best peer's, scaled by `factor`: met when ours ≤ factor ×
 * theirs (or ≥ with `higher`). The detail shows both with their spread over seeds.
 */
export function compareWithBest(
  name: string,
  samples: readonly Sample[],
  options: { factor?: number; higher?: boolean; unit?: string } = {},
): TargetCheck {
  const spreads = byRouter(samples)
  const mine = spreads.get(ours)
  const best = bestPeer(spreads, options.higher)
  const factor = options.factor ?? 1
  if (!mine || !best) return { name, verdict: 'not met', detail: 'not measured' }
  const met = options.higher
    ? mine.mean >= factor * best.spread.mean
    : mine.mean <= factor * best.spread.mean
  const unit = options.unit ?? ''
  return {
    name,
    verdict: verdictOf(met),
    detail: `kinference ${fmt(mine)}${unit} vs ${best.router} ${fmt(best.spread)}${unit}${factor !== 1 ? ` (× ${factor} = ${(factor * best.spread.mean).toFixed(3)}${unit})` : ''}`,
  }
}

/** kinference's mean against one named router's, scaled. */
export function compareWith(
  name: string,
  samples: readonly Sample[],
  other: string,
  factor: number,
  higher = false,
): TargetCheck {
  const spreads = byRouter(samples)
  const mine = spreads.get(ours)
  const theirs = spreads.get(other)
  if (!mine || !theirs) return { name, verdict: 'not met', detail: 'not measured' }
  const met = higher ? mine.mean >= factor * theirs.mean : mine.mean <= factor * theirs.mean
  return {
    name,
    verdict: verdictOf(met),
    detail: `kinference ${fmt(mine)} vs ${other} ${fmt(theirs)}${factor !== 1 ? ` (× ${factor} = ${(factor * theirs.mean).toFixed(3)})` : ''}`,
  }
}

/**
 * Capacity against the peers and the fluid bound. `factor` above 1 asks for that margin
 * over the best peer (the routing suite asks 1.1x); at 1 the target reads "≥ every peer's".
 */
export function capacityTargets(
  label: string,
  outcomes: readonly CapacityOutcome[],
  factor = 1,
): TargetCheck[] {
  // A router that passed at no rate has capacity 0.
  const samples = outcomes.map((o) => ({ router: o.router, value: o.result.rate ?? 0 }))
  const wanted = factor === 1 ? "every peer's" : `${factor}x the best peer's`
  const vsPeers = compareWithBest(`${label}: capacity ≥ ${wanted}`, samples, {
    higher: true,
    unit: ' req/s',
    factor,
  })
  const mine = spreadOf(outcomes.filter((o) => o.router === ours).map((o) => o.result.rate ?? 0))
  const fluid = spreadOf(outcomes.filter((o) => o.router === ours).map((o) => o.fluidRps))
  const unconverged = outcomes.filter((o) => !o.result.converged).length
  return [
    vsPeers,
    {
      name: `${label}: capacity ≥ 0.9 of the fluid bound`,
      verdict: verdictOf(mine.mean >= 0.9 * fluid.mean),
      detail: `kinference ${fmt(mine)} req/s vs fluid bound ${fmt(fluid)} req/s (${((mine.mean / fluid.mean) * 100).toFixed(0)}%)${unconverged > 0 ? `; ${unconverged} bisections did not converge` : ''}`,
    },
  ]
}

/** Per router, its capacity over the seeds against the fluid bound, as a report section. */
export function capacityTable(
  name: string,
  tag: string,
  outcomes: readonly CapacityOutcome[],
): string {
  const rows = [
    `### capacity: ${name}${tag}`,
    '',
    'Highest Poisson rate with p90 TTFT ≤ 2 s and ≥ 98% of requests completing within the run, by bisection.',
    '',
    '| router | capacity req/s | of fluid bound | runs | converged |',
    '| --- | ---: | ---: | ---: | ---: |',
  ]
  for (const router of [...new Set(outcomes.map((o) => o.router))]) {
    const mine = outcomes.filter((o) => o.router === router)
    const rate = spreadOf(mine.map((o) => o.result.rate ?? 0))
    const fluid = spreadOf(mine.map((o) => o.fluidRps))
    rows.push(
      `| ${router} | ${rate.mean.toFixed(2)} (${rate.min.toFixed(2)}–${rate.max.toFixed(2)}) | ${((rate.mean / fluid.mean) * 100).toFixed(0)}% | ${mine.reduce((n, o) => n + o.result.steps.length, 0)} | ${mine.filter((o) => o.result.converged).length}/${mine.length} |`,
    )
  }
  rows.push('')
  return rows.join('\n')
}

/** The scenario's runs with the routers' means, for the report's tables. */
export function scenarioTable(scenario: ScenarioRuns): string[] {
  const rows = [
    `### ${scenario.scenario}: ${scenario.preset.name} at ${scenario.rate}${scenario.replicas > 1 ? `, ${scenario.replicas} scorer replicas` : ''}`,
    '',
    '| router | median TTFT (s) | p90 TTFT (s) | mean TTFT (s) | median e2e (s) | served req/s | goodput req/s | hit rate | preemptions |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  const metrics: Metric[] = [
    (r) => r.ttftMedianS,
    (r) => r.ttftP90S,
    (r) => r.ttftMeanS,
    (r) => r.e2eMedianS,
    (r) => r.servedRps,
    (r) => r.goodputRps,
    (r) => r.hitRate,
    (r) => r.preemptions ?? Number.NaN,
  ]
  const columns = metrics.map((metric) => byRouter(samplesOf(scenario.runs, metric)))
  for (const router of columns[0]?.keys() ?? []) {
    rows.push(`| ${router} | ${columns.map((c) => fmt(c.get(router))).join(' | ')} |`)
  }
  rows.push('')
  return rows
}
