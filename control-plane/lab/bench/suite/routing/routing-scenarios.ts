import { spreadOf } from '../rate-points.ts'
import { type CapacityOutcome, runAtLoad, type ScenarioRuns } from '../targets/scenario-runs.ts'
import { compareWith, compareWithBest, samplesOf, scenarioTable } from '../targets/target-checks.ts'
import type { TargetCheck } from '../targets/target-verdict.ts'
import type { TargetsContext } from '../targets/targets-context.ts'
import { presetNamed } from './routing-workloads.ts'

/** Issue 25's stale index: KV events 500 ms late and a tenth of them lost. */
export const staleTiming = { eventDelayMs: 500, eventLossRate: 0.1 }
/** The stale index runs at this fraction of kinference's own shared-prefix capacity. */
export const staleAt = 0.9
/** Multi-turn's streams, and its fewest requests (at request scale 1). */
export const multiTurnStreams = 80
export const multiTurnMinRequests = 1_000
/** Fractions of the fluid bound no-prefix and reasoning are judged at (as the targets suite). */
export const noRegressionFractions: readonly number[] = [0.5, 0.75, 0.9]

export interface ScenarioOutcome {
  sections: string[]
  targets: TargetCheck[]
}

/** Multi-turn at 80 streams, max(1,000, the preset's) requests scaled: its tails. */
export async function multiTurnScenario(ctx: TargetsContext): Promise<ScenarioOutcome> {
  const preset = presetNamed('multi-turn')
  const requests = Math.max(multiTurnMinRequests, preset.maxRequests)
  const load = await runAtLoad(ctx, `multi-turn tails (${requests} requests × scale)`, {
    preset,
    replicas: 1,
    rate: multiTurnStreams,
    maxRequests: Math.max(24, Math.round(requests * ctx.requestScale)),
  })
  const at = `multi-turn at ${multiTurnStreams} streams`
  return {
    sections: scenarioTable(load),
    targets: [
      compareWithBest(
        `${at}: p90 TTFT ≤ 0.85x the best peer's`,
        samplesOf(load.runs, (r) => r.ttftP90S),
        {
          factor: 0.85,
          unit: ' s',
        },
      ),
      compareWithBest(
        `${at}: median TTFT ≤ the best peer's`,
        samplesOf(load.runs, (r) => r.ttftMedianS),
        { unit: ' s' },
      ),
    ],
  }
}

const freshLabel = 'kinference (fresh index)'

/**
 * kinference alone on shared-prefix at 90% of its own mean capacity, once with a fresh
 * index and once with a stale one, the same seeds: the stale p90 TTFT must stay within
 * 1.2x of the fresh one.
 */
export async function staleIndexScenario(
  ctx: TargetsContext,
  capacity: readonly CapacityOutcome[],
): Promise<ScenarioOutcome> {
  const name = `stale index (events ${staleTiming.eventDelayMs} ms late, ${staleTiming.eventLossRate * 100}% lost): kinference's p90 TTFT ≤ 1.2x its fresh-index figure`
  const ours = spreadOf(capacity.map((o) => o.result.rate ?? 0)).mean
  if (!(ours > 0))
    return {
      sections: [],
      targets: [
        { name, verdict: 'not met', detail: 'kinference has no capacity on shared-prefix' },
      ],
    }
  const probe = {
    preset: presetNamed('shared-prefix'),
    replicas: 1,
    rate: Number((staleAt * ours).toPrecision(3)),
  }
  const [fresh, stale] = await Promise.all([
    runAtLoad(ctx, 'index fresh', probe, ['kinference']),
    runAtLoad(
      ctx,
      `stale index (events ${staleTiming.eventDelayMs} ms late, ${staleTiming.eventLossRate * 100}% lost)`,
      { ...probe, timing: staleTiming },
      ['kinference'],
    ),
  ])
  const samples = [
    ...samplesOf(stale.runs, (r) => r.ttftP90S),
    ...samplesOf(fresh.runs, (r) => r.ttftP90S).map((s) => ({ ...s, router: freshLabel })),
  ]
  const check = compareWith(name, samples, freshLabel, 1.2)
  return {
    sections: [...scenarioTable(fresh), ...scenarioTable(stale)],
    targets: [{ ...check, detail: `${check.detail} s at ${probe.rate} req/s` }],
  }
}

/** no-prefix and reasoning: median and p90 TTFT within 1% of the best peer's. */
export async function noRegressionScenario(ctx: TargetsContext): Promise<ScenarioOutcome> {
  const outcomes = await Promise.all(
    ['no-prefix', 'reasoning'].map(async (name) => {
      const preset = presetNamed(name)
      const fluid = (await ctx.bounds(preset, ctx.seeds[0] ?? 42)).fluid.requestsPerSecond
      return Promise.all(
        noRegressionFractions.map((f) =>
          runAtLoad(ctx, `no regression (${f} of the fluid bound)`, {
            preset,
            replicas: 1,
            rate: Number((f * fluid).toPrecision(2)),
          }),
        ),
      )
    }),
  )
  const loads = outcomes.flat()
  return {
    sections: loads.flatMap((load) => scenarioTable(load)),
    targets: loads.flatMap((load) => noRegressionTargets(load)),
  }
}

function noRegressionTargets(load: ScenarioRuns): TargetCheck[] {
  const at = `${load.preset.name} at ${load.rate} req/s`
  return [
    compareWithBest(
      `${at}: median TTFT within 1% of the best peer`,
      samplesOf(load.runs, (r) => r.ttftMedianS),
      { factor: 1.01, unit: ' s' },
    ),
    compareWithBest(
      `${at}: p90 TTFT within 1% of the best peer`,
      samplesOf(load.runs, (r) => r.ttftP90S),
      { factor: 1.01, unit: ' s' },
    ),
  ]
}
