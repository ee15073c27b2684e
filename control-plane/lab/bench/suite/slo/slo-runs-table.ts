import { spreadOf } from '../rate-points.ts'
import type { RunSummary } from '../targets/run-summary.ts'
import type { ScenarioRuns } from '../targets/scenario-runs.ts'

type Metric = (run: RunSummary) => number

const columns: { title: string; metric: Metric; digits: number }[] = [
  { title: 'offered req/s', metric: (r) => r.offeredRps, digits: 2 },
  { title: 'SLO goodput req/s', metric: (r) => r.tokenGoodputRps, digits: 2 },
  { title: 'TTFT goodput req/s', metric: (r) => r.goodputRps, digits: 2 },
  { title: 'of it local', metric: (r) => r.localGoodputRps, digits: 2 },
  { title: 'to provider %', metric: (r) => r.providerShare * 100, digits: 1 },
  { title: 'refused %', metric: (r) => r.refusedShare * 100, digits: 1 },
  { title: 'median TTFT (s)', metric: (r) => r.ttftMedianS, digits: 3 },
  { title: 'p90 TTFT (s)', metric: (r) => r.ttftP90S, digits: 3 },
]

/**
 * One overload scenario, a row per router: what was offered, the SLO goodput and the part
 * of it the pool served, the shares sent to the provider and refused, and the served
 * requests' TTFT. Means over the seeds, with their spread in brackets.
 */
export function sloRunsTable(scenario: ScenarioRuns): string {
  const routers = [...new Set(scenario.runs.map((r) => r.router))]
  const rows = routers.map((router) => {
    const runs = scenario.runs.filter((r) => r.router === router)
    const cells = columns.map(({ metric, digits }) => {
      const spread = spreadOf(runs.map(metric))
      const range =
        runs.length > 1 ? ` [${spread.min.toFixed(digits)}–${spread.max.toFixed(digits)}]` : ''
      return `${spread.mean.toFixed(digits)}${range}`
    })
    return `| ${router} | ${cells.join(' | ')} |`
  })
  return [
    `### ${scenario.scenario}: ${scenario.preset.name}`,
    '',
    `| router | ${columns.map((c) => c.title).join(' | ')} |`,
    `| --- |${' ---: |'.repeat(columns.length)}`,
    ...rows,
    '',
  ].join('\n')
}
