import type { BenchPreset } from '../../bench-presets.ts'
import type { DesAdmissionOptionsInput } from '../../des/des-admission.ts'
import { spreadOf } from '../rate-points.ts'
import type { RunSummary } from '../targets/run-summary.ts'
import { runAtLoad, type ScenarioRuns } from '../targets/scenario-runs.ts'
import { type TargetCheck, verdictOf } from '../targets/target-verdict.ts'
import type { TargetsContext } from '../targets/targets-context.ts'

const ours = 'kinference'
/** Tenant A sends ten times tenant B's traffic (issue 26's noisy neighbour). */
const tenants = [
  { name: 'A', weight: 10 },
  { name: 'B', weight: 1 },
]
/** Requests per run, before the suite's scale: enough of B's for a p90 (about 270 of 3,000). */
const mixedRequests = 3_000
const aloneRequests = 300

export interface NoisyNeighbour {
  sections: string[]
  targets: TargetCheck[]
}

/**
 * Tenants A and B at 10:1 past capacity (1.5x kinference's), every router with its own
 * admission, against B alone at its own rate: B's p90 TTFT should hardly notice A, and A
 * should get the rest of the capacity.
 */
export async function noisyNeighbour(
  ctx: TargetsContext,
  workload: BenchPreset,
  capacity: number,
  goodputAtCapacity: number,
  admission: DesAdmissionOptionsInput,
): Promise<NoisyNeighbour> {
  const rate = Number((1.5 * Math.max(capacity, 0.1)).toPrecision(3))
  const aloneRate = Number((rate / 11).toPrecision(3))
  const scaled = (count: number) => Math.max(24, Math.round(count * ctx.requestScale))
  const probe = { preset: workload, replicas: 1, profile: 'poisson' }
  const [mixed, alone] = await Promise.all([
    runAtLoad(ctx, `noisy neighbour: A at 10x B, ${rate} req/s`, {
      ...probe,
      rate,
      maxRequests: scaled(mixedRequests),
      admission: { ...admission, tenants },
    }),
    runAtLoad(ctx, `B alone, ${aloneRate} req/s`, {
      ...probe,
      rate: aloneRate,
      maxRequests: scaled(aloneRequests),
      admission: { ...admission, tenants: [{ name: 'B', weight: 1 }] },
    }),
  ])
  return {
    sections: [neighbourTable(mixed, alone)],
    targets: neighbourTargets(mixed, alone, goodputAtCapacity),
  }
}

type TenantMetric = (tenant: RunSummary['tenants'][string]) => number

function meanOf(runs: ScenarioRuns, router: string, tenant: string, metric: TenantMetric): number {
  const values = runs.runs
    .filter((r) => r.router === router)
    .flatMap((r) => {
      const summary = r.tenants[tenant]
      return summary ? [metric(summary)] : []
    })
  return spreadOf(values).mean
}

function neighbourTargets(
  mixed: ScenarioRuns,
  alone: ScenarioRuns,
  goodputAtCapacity: number,
): TargetCheck[] {
  const together = meanOf(mixed, ours, 'B', (t) => t.ttftP90S)
  const byItself = meanOf(alone, ours, 'B', (t) => t.ttftP90S)
  const bGoodput = meanOf(alone, ours, 'B', (t) => t.tokenGoodputRps)
  const aGoodput = meanOf(mixed, ours, 'A', (t) => t.tokenGoodputRps)
  const rest = Math.max(0, goodputAtCapacity - bGoodput)
  return [
    {
      name: "noisy neighbour: B's p90 TTFT ≤ 1.2x its value alone",
      verdict: verdictOf(together <= 1.2 * byItself),
      detail: `${together.toFixed(3)} s vs ${byItself.toFixed(3)} s alone (${(together / byItself).toFixed(2)}x)`,
    },
    {
      name: "noisy neighbour: A's SLO goodput ≥ 0.9 of the rest of the capacity",
      verdict: verdictOf(aGoodput >= 0.9 * rest),
      detail: `${aGoodput.toFixed(2)} req/s vs ${rest.toFixed(2)} (goodput at capacity ${goodputAtCapacity.toFixed(2)} less B's ${bGoodput.toFixed(2)})`,
    },
  ]
}

function neighbourTable(mixed: ScenarioRuns, alone: ScenarioRuns): string {
  const routers = [...new Set(mixed.runs.map((r) => r.router))]
  const rows = routers.map((router) => {
    const cells = [
      meanOf(mixed, router, 'B', (t) => t.ttftP90S).toFixed(3),
      meanOf(alone, router, 'B', (t) => t.ttftP90S).toFixed(3),
      meanOf(mixed, router, 'B', (t) => t.tokenGoodputRps).toFixed(2),
      meanOf(mixed, router, 'A', (t) => t.tokenGoodputRps).toFixed(2),
    ]
    return `| ${router} | ${cells.join(' | ')} |`
  })
  return [
    `### ${mixed.scenario} (B alone at ${alone.rate} req/s): ${mixed.preset.name}`,
    '',
    "| router | B's p90 TTFT (s) | B's alone (s) | B's SLO goodput req/s | A's SLO goodput req/s |",
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n')
}
