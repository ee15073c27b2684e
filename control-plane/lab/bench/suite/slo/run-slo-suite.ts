import { type BenchPreset, benchPresets } from '../../bench-presets.ts'
import type { DesAdmissionOptionsInput } from '../../des/des-admission.ts'
import { spreadOf } from '../rate-points.ts'
import { sloTpotMs, sloTtftMs } from '../targets/run-summary.ts'
import {
  type CapacityOutcome,
  measureCapacity,
  runAtLoad,
  type ScenarioRuns,
} from '../targets/scenario-runs.ts'
import { compareWithBest, samplesOf } from '../targets/target-checks.ts'
import { suiteMarkdown, type TargetCheck, verdictOf } from '../targets/target-verdict.ts'
import {
  createTargetsContext,
  type TargetsContext,
  type TargetsOptions,
} from '../targets/targets-context.ts'
import { cpuTierScenarios } from './cpu-tier-scenarios.ts'
import { noisyNeighbour } from './noisy-neighbour.ts'
import { sloRunsTable } from './slo-runs-table.ts'

export interface SloReport {
  markdown: string
  targets: TargetCheck[]
}

const preset = (name: string): BenchPreset => benchPresets[name] as BenchPreset
/** The overload loads, as multiples of kinference's steady-state capacity (issue 26). */
const overloadFactors = [1.5, 3]
const ours = 'kinference'
const withoutBursting: DesAdmissionOptionsInput = {
  gate: 'own',
  sloTtftMs,
  sloTpotMs,
  hold: true,
}
const withBursting: DesAdmissionOptionsInput = { ...withoutBursting, burst: true }

/**
 * The service-level suite (docs/service-levels.md): kinference's capacity by bisection on
 * the overload workload, then open-loop runs at 1.5x and 3x of it with every request
 * carrying a 2 s TTFT objective. Every router runs with its own admission (kinference's
 * objective, holding what its pods cannot start now in token-fair order until the
 * objective's deadline; llm-d's flow control; Dynamo's busy threshold; none for the rest), without
 * bursting and with it (refused requests go to the provider), and kinference once with no
 * admission at all (what the issue measured); tenants at 10:1 (the noisy neighbour); and
 * vLLM's CPU tier (multi-turn with and without it, the Mooncake trace against its tiered
 * ceiling). Side by side on one pool of DES workers.
 */
export async function runSloSuite(options: TargetsOptions): Promise<SloReport> {
  const ctx = createTargetsContext(options)
  try {
    const workload = preset('shared-prefix')
    const outcomes = await Promise.all(
      ctx.seeds.map((seed) => measureCapacity(ctx, workload, ours, seed, 1)),
    )
    const capacity = spreadOf(outcomes.map((o) => o.result.rate ?? 0)).mean
    const atCapacity = spreadOf(outcomes.map((o) => o.atCapacity?.tokenGoodputRps ?? 0)).mean
    const sections = [capacityLine(outcomes, capacity, atCapacity)]
    const targets: TargetCheck[] = []
    for (const factor of overloadFactors) {
      const rate = Number((factor * Math.max(capacity, 0.1)).toPrecision(3))
      const label = `overload ${factor}x (${rate} req/s)`
      const [local, burst, bare] = await Promise.all([
        overloadRuns(ctx, workload, `${label}, no bursting`, rate, withoutBursting),
        overloadRuns(ctx, workload, `${label}, bursting`, rate, withBursting),
        overloadRuns(ctx, workload, `${label}, no admission`, rate, { gate: 'none' }, [ours]),
      ])
      sections.push(...[local, burst, bare].map(sloRunsTable))
      targets.push(...overloadTargets(factor, local, burst, atCapacity))
    }
    const noisy = await noisyNeighbour(ctx, workload, capacity, atCapacity, withoutBursting)
    sections.push(...noisy.sections)
    targets.push(...noisy.targets)
    const tier = await cpuTierScenarios(ctx)
    sections.push(...tier.sections)
    targets.push(...tier.targets)
    const markdown = suiteMarkdown(
      'Kinference under overload: service levels, admission, bursting and the CPU tier',
      `Discrete-event runs, ${options.pods} pods, seeds ${options.seeds.join(', ')} (means, spread over seeds in brackets), routers ${options.routers.join(', ')}; request scale ${options.requestScale}. Every request carries the objectives TTFT ≤ ${sloTtftMs} ms and time per output token ≤ ${sloTpotMs} ms; SLO goodput counts the requests that met both, from a pod or from the provider, per second of offered traffic (TTFT goodput: the first alone).`,
      sections,
      targets,
    )
    return { markdown, targets }
  } finally {
    await ctx.close()
  }
}

function overloadRuns(
  ctx: TargetsContext,
  workload: BenchPreset,
  scenario: string,
  rate: number,
  admission: DesAdmissionOptionsInput,
  routers: readonly string[] = ctx.routers,
): Promise<ScenarioRuns> {
  const probe = { preset: workload, replicas: 1, rate, profile: 'poisson', admission }
  return runAtLoad(ctx, scenario, probe, routers)
}

function overloadTargets(
  factor: number,
  local: ScenarioRuns,
  burst: ScenarioRuns,
  atCapacity: number,
): TargetCheck[] {
  const mean = (runs: ScenarioRuns, metric: (r: ScenarioRuns['runs'][number]) => number) =>
    spreadOf(runs.runs.filter((r) => r.router === ours).map(metric)).mean
  const burstGoodput = mean(burst, (r) => r.tokenGoodputRps)
  const offered = mean(burst, (r) => r.offeredRps)
  const localGoodput = mean(local, (r) => r.tokenGoodputRps)
  return [
    {
      name: `overload ${factor}x, bursting: SLO goodput ≥ 0.95 of offered`,
      verdict: verdictOf(burstGoodput >= 0.95 * offered),
      detail: `${burstGoodput.toFixed(2)} of ${offered.toFixed(2)} req/s (${percent(burstGoodput, offered)})`,
    },
    {
      name: `overload ${factor}x, no bursting: SLO goodput ≥ 0.9 of kinference's goodput at capacity`,
      verdict: verdictOf(localGoodput >= 0.9 * atCapacity),
      detail: `${localGoodput.toFixed(2)} vs ${atCapacity.toFixed(2)} req/s at capacity (${percent(localGoodput, atCapacity)})`,
    },
    compareWithBest(
      `overload ${factor}x, no bursting: SLO goodput ≥ every peer's with its own admission`,
      samplesOf(local.runs, (r) => r.tokenGoodputRps),
      { higher: true, unit: ' req/s' },
    ),
  ]
}

function capacityLine(
  outcomes: readonly CapacityOutcome[],
  capacity: number,
  goodput: number,
): string {
  const seeds = outcomes.map((o) => `seed ${o.seed}: ${(o.result.rate ?? 0).toFixed(2)}`).join(', ')
  return [
    '### kinference capacity: shared-prefix',
    '',
    `Steady-state capacity (p90 TTFT ≤ 2 s, no admission) ${capacity.toFixed(2)} req/s (${seeds}); SLO goodput there (both objectives) ${goodput.toFixed(2)} req/s.`,
    '',
  ].join('\n')
}

const percent = (part: number, whole: number) =>
  whole > 0 ? `${((part / whole) * 100).toFixed(0)}%` : 'n/a'
