import type { BenchPreset } from './bench-presets.ts'
import type { BenchmarkRun } from './request-record.ts'
import { closestByRatio } from './suite/match-rate.ts'
import { formatSeconds, type RatePoint, ratePoints } from './suite/rate-points.ts'
import {
  baselineRouter,
  describeBounds,
  ourRouter,
  ratioText,
  renderRateTable,
  type WorkloadBounds,
} from './suite/rate-table.ts'
import {
  ratioVerdict,
  type TargetCheck,
  tallyTargets,
  targetLine,
  verdictOf,
} from './suite/targets/target-verdict.ts'

export interface SuiteSummary {
  markdown: string
  targets: TargetCheck[]
}

/** Highest rate whose mean median TTFT is within the SLO (0 when none is). */
export function peakRate(points: readonly RatePoint[], sloMs: number): number {
  let peak = 0
  for (const point of points)
    if (point.ttftMedianS.mean * 1000 <= sloMs) peak = Math.max(peak, point.rate)
  return peak
}

/**
 * The rate at which round robin's median TTFT is closest (as a ratio) to `ttftS`: where
 * the published table was taken, since its rates are not published.
 */
export function matchedRate(points: readonly RatePoint[], ttftS: number): RatePoint | undefined {
  return closestByRatio(points, (p) => p.ttftMedianS.mean, ttftS)
}

const s = (value: number) => formatSeconds(value)

/** The target ratios at the matched rate: the published RR ÷ Kinference figures, rounded down. */
const ratioTargetsByWorkload: Record<string, { ttft: number; e2e: number | null }> = {
  'shared-prefix': { ttft: 22, e2e: 1.8 },
  'multi-turn': { ttft: 2.9, e2e: null },
}

/** Within this of the best peer at every rate: the no-regression rule. */
const noRegressionTolerance = 1.01

function unitOf(preset: BenchPreset): string {
  return preset.profile === 'concurrent' ? 'streams' : 'req/s'
}

function targetRows(preset: BenchPreset, byRouter: ReadonlyMap<string, RatePoint[]>): string[] {
  const rrPoints = byRouter.get(baselineRouter) ?? []
  const kinPoints = byRouter.get(ourRouter) ?? []
  const published = preset.published
  const top = rrPoints.at(-1)
  const matched = published ? matchedRate(rrPoints, published.roundRobin.ttftS) : undefined
  const rows: string[] = []
  // Where round robin is unstable at the matched rate, its highest stable rate too: the
  // gain there measures routing, the matched rate's cannot.
  const stable = matched && !matched.stability.stable ? highestStable(byRouter) : undefined
  const places: [string, RatePoint | undefined][] = [
    ['closest to the target', matched],
    ['highest rate where round robin is stable', stable],
    ['top rate', top],
  ]
  const shown = new Set<number>()
  for (const [label, rr] of places) {
    if (!rr || shown.has(rr.rate)) continue
    shown.add(rr.rate)
    const kin = kinPoints.find((p) => p.rate === rr.rate)
    if (!kin) continue
    const at = `${preset.profile} ${rr.rate} (${label})`
    rows.push(
      `| ${preset.name} | ${at} | median TTFT (s) | ${published ? s(published.roundRobin.ttftS) : '–'} | ${published ? s(published.kinference.ttftS) : '–'} | ${s(rr.ttftMedianS.mean)} | ${s(kin.ttftMedianS.mean)} | ${ratioText(rr, kin.ttftMedianS.mean, rr.ttftMedianS.mean)} | ${rr.stability.why} |`,
      `| ${preset.name} | ${at} | median e2e (s) | ${published?.roundRobin.e2eS != null ? s(published.roundRobin.e2eS) : '–'} | ${published?.kinference.e2eS != null ? s(published.kinference.e2eS) : '–'} | ${s(rr.e2eMedianS.mean)} | ${s(kin.e2eMedianS.mean)} | ${ratioText(rr, kin.e2eMedianS.mean, rr.e2eMedianS.mean)} | |`,
    )
  }
  return rows
}

const ratioFigure = (ratio: number) => `${ratio.toFixed(ratio >= 10 ? 0 : 2)}x`

/** Round robin's highest rate where it was stable on every seed and kinference ran too. */
function highestStable(byRouter: ReadonlyMap<string, RatePoint[]>): RatePoint | undefined {
  const kinRates = new Set((byRouter.get(ourRouter) ?? []).map((p) => p.rate))
  return (byRouter.get(baselineRouter) ?? [])
    .filter((p) => p.stability.stable && kinRates.has(p.rate))
    .at(-1)
}

function ratioTargets(preset: BenchPreset, byRouter: ReadonlyMap<string, RatePoint[]>) {
  const wanted = ratioTargetsByWorkload[preset.name]
  const published = preset.published
  if (!wanted || !published) return []
  const rr = matchedRate(byRouter.get(baselineRouter) ?? [], published.roundRobin.ttftS)
  const kin = rr && byRouter.get(ourRouter)?.find((p) => p.rate === rr.rate)
  if (!rr || !kin) return []
  const stable = rr.stability.stable
  // Where round robin is unstable at the matched rate, the ratio there is not judged; the
  // ratio at the highest rate where it is stable is printed beside it, for what it measures.
  const stableRr = stable ? undefined : highestStable(byRouter)
  const stableKin = stableRr && byRouter.get(ourRouter)?.find((p) => p.rate === stableRr.rate)
  const checks: TargetCheck[] = []
  const check = (metric: string, want: number, get: (p: RatePoint) => number) => {
    const ratio = get(rr) / get(kin)
    const atStable =
      stableRr && stableKin
        ? `; at ${unitOf(preset)} ${stableRr.rate}, the highest rate where round robin is stable: ${ratioFigure(get(stableRr) / get(stableKin))}, round robin ${s(stableRr.ttftMedianS.mean)} s`
        : stable
          ? ''
          : '; round robin is stable at no rate run'
    checks.push({
      name: `${preset.name}: median ${metric} ≥ ${want}x lower than round robin where its median TTFT is closest to the target's ${s(published.roundRobin.ttftS)} s`,
      // The published figure lies past round robin's collapse on our pool: a ratio against
      // a baseline falling behind its arrivals grows with the run's length, so it is
      // printed but not judged.
      verdict: ratioVerdict(ratio >= want, stable),
      detail: `${ratioFigure(ratio)} at ${unitOf(preset)} ${rr.rate}, round robin ${s(rr.ttftMedianS.mean)} s, ${stable ? 'stable' : `baseline unstable: ${rr.stability.why}`}${atStable}`,
    })
  }
  check('TTFT', wanted.ttft, (p) => p.ttftMedianS.mean)
  if (wanted.e2e !== null) check('e2e', wanted.e2e, (p) => p.e2eMedianS.mean)
  return checks
}

/** The worst ratio, over the rates, of kinference's mean median TTFT to the best peer's. */
export function worstAgainstBestPeer(byRouter: ReadonlyMap<string, readonly RatePoint[]>): {
  ratio: number
  rate: number | null
} {
  let worst = { ratio: Number.NaN, rate: null as number | null }
  for (const point of byRouter.get(ourRouter) ?? []) {
    const peers = [...byRouter]
      .filter(([router]) => router !== ourRouter)
      .flatMap(([, points]) => points.filter((p) => p.rate === point.rate))
    if (peers.length === 0) continue
    const best = Math.min(...peers.map((p) => p.ttftMedianS.mean))
    const ratio = point.ttftMedianS.mean / best
    if (Number.isNaN(worst.ratio) || ratio > worst.ratio) worst = { ratio, rate: point.rate }
  }
  return worst
}

function noRegressionTarget(
  workload: string,
  byRouter: ReadonlyMap<string, RatePoint[]>,
): TargetCheck[] {
  const { ratio, rate } = worstAgainstBestPeer(byRouter)
  if (rate === null) return []
  return [
    {
      name: `${workload}: median TTFT within ${Math.round((noRegressionTolerance - 1) * 100)}% of the best peer at every rate`,
      verdict: verdictOf(ratio <= noRegressionTolerance),
      detail: `worst ${ratio.toFixed(3)}x of the best peer, at ${rate}`,
    },
  ]
}

/**
 * The published table (the targets) beside ours, at the rate where round robin's median
 * TTFT is closest to the published one (and, where round robin is unstable there, at its
 * highest stable rate) and at the top rate, each with round robin's stability (a ratio
 * against an unstable baseline is not printed); then per workload its
 * bounds and the per-rate table, the primary result; then the targets for kinference,
 * checked, and their tally.
 */
export function summarizeSuite(
  runs: readonly BenchmarkRun[],
  presets: readonly BenchPreset[],
  bounds: ReadonlyMap<string, WorkloadBounds>,
  sloMs: number,
): SuiteSummary {
  const points = ratePoints(runs)
  const seeds = [...new Set(runs.map((run) => run.config.seed))]
  const lines: string[] = ['# Kinference against its targets', '']
  lines.push(
    `${runs[0]?.config.mode === 'live' ? 'Live runs over HTTP' : 'Discrete-event runs'}, ${runs[0]?.config.pods ?? 0} pods of ${runs[0]?.config.gpuProfile ?? '?'}, seed ${seeds.join(', ')}${seeds.length > 1 ? ' (means, spread in brackets)' : ''}. A ratio is printed only where round robin is stable (served ≥ 95% of what was offered in the measured window, the middle third of the arrivals; no TTFT trend across the run).`,
    '',
    '| workload | at | metric | target: round robin | target: Kinference | ours: round robin | ours: kinference | ours: gain | round robin |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
  )
  const targets: TargetCheck[] = []
  const sections: string[] = []
  for (const preset of presets) {
    const byRouter = points.get(preset.name)
    if (!byRouter) continue
    lines.push(...targetRows(preset, byRouter))
    targets.push(...ratioTargets(preset, byRouter))
    if (preset.name === 'no-prefix') targets.push(...noRegressionTarget(preset.name, byRouter))
    const rrPeak = peakRate(byRouter.get(baselineRouter) ?? [], sloMs)
    const kinPeak = peakRate(byRouter.get(ourRouter) ?? [], sloMs)
    sections.push(
      [
        `## ${preset.name}`,
        '',
        preset.description,
        '',
        describeBounds(bounds.get(preset.name)),
        '',
        `Highest rate with median TTFT ≤ ${sloMs} ms: round robin ${rrPeak}, kinference ${kinPeak} (target: ${preset.published?.peakRatio ? `${preset.published.peakRatio}x` : '–'}).`,
        '',
        ...renderRateTable(byRouter, unitOf(preset), bounds.get(preset.name)),
        '',
      ].join('\n'),
    )
  }
  lines.push('', ...sections, '## Targets', '')
  lines.push(...targets.map(targetLine), '', tallyTargets(targets), '')
  return { markdown: lines.join('\n'), targets }
}
