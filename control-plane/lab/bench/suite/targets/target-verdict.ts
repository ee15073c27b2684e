/**
 * What a target came to. "baseline unstable": the target is a ratio against round robin,
 * and round robin fell behind its arrivals there (docs/benchmarks.md, "When a ratio is
 * printed"), so the ratio grows with the run's length instead of measuring routing. Such
 * a target is not judged: it counts neither as met nor as not met, and the tally says how
 * many there were.
 */
export type Verdict = 'met' | 'not met' | 'baseline unstable'

export interface TargetCheck {
  name: string
  verdict: Verdict
  detail: string
}

export const verdictOf = (met: boolean): Verdict => (met ? 'met' : 'not met')

/** A ratio against a baseline: judged only where the baseline is stable. */
export const ratioVerdict = (met: boolean, baselineStable: boolean): Verdict =>
  baselineStable ? verdictOf(met) : 'baseline unstable'

const labels: Record<Verdict, string> = {
  met: 'met',
  'not met': '**not met**',
  'baseline unstable': 'not judged (baseline unstable)',
}

/** The target as a line of the report's list: its verdict, name and figure. */
export const targetLine = (target: TargetCheck): string =>
  `- ${labels[target.verdict]}: ${target.name} (${target.detail})`

/** "47 targets, 23 met, 20 not met, 4 not judged (baseline unstable)". */
export function tallyTargets(targets: readonly TargetCheck[]): string {
  const count = (verdict: Verdict) => targets.filter((t) => t.verdict === verdict).length
  return `${targets.length} targets, ${count('met')} met, ${count('not met')} not met, ${count('baseline unstable')} not judged (baseline unstable)`
}

/** A suite's report: its title, what was run, its sections, then every target's line. */
export function suiteMarkdown(
  title: string,
  intro: string,
  sections: readonly string[],
  targets: readonly TargetCheck[],
): string {
  return [
    `# ${title}`,
    '',
    intro,
    '',
    ...sections,
    '## Targets',
    '',
    ...targets.map(targetLine),
    '',
  ].join('\n')
}
