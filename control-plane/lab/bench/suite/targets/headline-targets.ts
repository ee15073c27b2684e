import { type BenchPreset, benchPresets } from '../../bench-presets.ts'
import { closestByRatio, matchRate } from '../match-rate.ts'
import { loadAt } from '../rate-grid.ts'
import { spreadOf } from '../rate-points.ts'
import type { RunSummary } from './run-summary.ts'
import { gridOf, runAtLoad, type ScenarioRuns } from './scenario-runs.ts'
import { ratioVerdict, type TargetCheck } from './target-verdict.ts'
import type { TargetsContext } from './targets-context.ts'

/** The target ratios: the published round robin ÷ Kinference figures (docs/architecture.md §7). */
const headlineRatios = [
  { preset: 'shared-prefix', ttft: 22, e2e: 1.8 },
  { preset: 'multi-turn', ttft: 2.9, e2e: null },
] as const

const mean = (runs: readonly RunSummary[], router: string, metric: (r: RunSummary) => number) =>
  spreadOf(runs.filter((r) => r.router === router).map(metric)).mean

const unstableSeeds = (load: ScenarioRuns) =>
  load.runs.filter((r) => r.router === 'round-robin' && !r.stability.stable)

/** Round robin's mean over kinference's, at one load. */
const ratioAt = (load: ScenarioRuns, get: (r: RunSummary) => number) =>
  mean(load.runs, 'round-robin', get) / mean(load.runs, 'kinference', get)

/** The highest-rate load where round robin was stable on every seed, if any. */
const highestStable = (loads: readonly ScenarioRuns[]) =>
  [...loads].sort((a, b) => b.rate - a.rate).find((load) => unstableSeeds(load).length === 0) ??
  null

/**
 * The target table as targets: each workload over its grid (round robin and kinference,
 * every seed), judged at the rate where round robin's mean median TTFT is closest, as a
 * ratio, to the published one (the grid plus the rate bisection finds for it); the ratio
 * is judged only where round robin is stable there on every seed: an unstable one makes the
 * ratio grow with the run's length, so the target is then "baseline unstable", not judged,
 * with the ratio at the highest stable rate printed beside it.
 */
export async function headlineTargets(
  ctx: TargetsContext,
): Promise<{ sections: string[]; targets: TargetCheck[] }> {
  const sections: string[] = []
  const targets: TargetCheck[] = []
  for (const wanted of headlineRatios) {
    const preset = benchPresets[wanted.preset] as BenchPreset
    const published = preset.published
    if (!published) continue
    const grid = await gridOf(ctx, preset)
    const matched0 = await matchRate(
      async (rate) =>
        (
          await ctx.run({
            preset,
            router: 'round-robin',
            seed: ctx.seeds[0] ?? 42,
            replicas: 1,
            rate,
          })
        ).ttftMedianS,
      published.roundRobin.ttftS,
      grid[0] ?? 1,
      grid.at(-1) ?? 2,
      8,
      (rate) => loadAt(preset.profile, rate),
    )
    const extra = matched0.rate
    if (!grid.includes(extra)) grid.push(extra)
    grid.sort((a, b) => a - b)
    const loads: ScenarioRuns[] = await Promise.all(
      grid.map((rate) =>
        runAtLoad(ctx, 'the target table', { preset, replicas: 1, rate }, [
          'round-robin',
          'kinference',
        ]),
      ),
    )
    const matched = closestByRatio(
      loads,
      (load) => mean(load.runs, 'round-robin', (r) => r.ttftMedianS),
      published.roundRobin.ttftS,
    )
    if (!matched) continue
    const unstable = unstableSeeds(matched)
    const stability =
      unstable.length === 0
        ? 'stable'
        : `baseline unstable on seed ${unstable.map((r) => r.seed).join(', ')}: ${unstable[0]?.stability.why}`
    const rrTtft = mean(matched.runs, 'round-robin', (r) => r.ttftMedianS)
    // Where round robin is unstable at the matched rate, the ratio at the highest grid rate
    // where it is stable is printed beside it: a figure that measures routing, not judged.
    const stableLoad = unstable.length === 0 ? null : highestStable(loads)
    sections.push(
      `### the target table: ${preset.name}`,
      '',
      `Grid ${grid.join(', ')}; round robin's median TTFT is closest to the target's ${published.roundRobin.ttftS} s at ${matched.rate} (${rrTtft.toFixed(2)} s, ${stability}).`,
      '',
    )
    const check = (metric: string, want: number, get: (r: RunSummary) => number) => {
      const ratio = ratioAt(matched, get)
      const atStable = stableLoad
        ? `; at ${stableLoad.rate}, the highest rate where round robin is stable: ${ratioAt(stableLoad, get).toFixed(2)}x, round robin ${mean(stableLoad.runs, 'round-robin', (r) => r.ttftMedianS).toFixed(2)} s`
        : unstable.length > 0
          ? '; round robin is stable at no rate of the grid'
          : ''
      targets.push({
        name: `${preset.name}, the target table: median ${metric} ≥ ${want}x lower than round robin`,
        verdict: ratioVerdict(ratio >= want, unstable.length === 0),
        detail: `${ratio.toFixed(2)}x at ${matched.rate}, round robin ${rrTtft.toFixed(2)} s, ${stability}${atStable}`,
      })
    }
    check('TTFT', wanted.ttft, (r) => r.ttftMedianS)
    if (wanted.e2e !== null) check('e2e', wanted.e2e, (r) => r.e2eMedianS)
  }
  return { sections, targets }
}
