import type { LocalityConstraint } from '../crd/inference-policy.ts'
import type { TraceStep, UpstreamTarget } from './policy-decision.ts'

export interface ConstraintResult {
  attempts: UpstreamTarget[]
  steps: TraceStep[]
  /** The first constraint that left nothing to try; the request must then be rejected. */
  violated: LocalityConstraint | null
}

/**
 * Keeps only the attempts every applicable constraint allows. A constraint label `pii`
 * also covers `pii:card` and the like, so a client-sent qualified label alone cannot
 * slip past it; with a failed detector every constraint applies (fail closed).
 */
export function applyConstraints(
  constraints: readonly LocalityConstraint[],
  attempts: readonly UpstreamTarget[],
  labels: ReadonlySet<string>,
  detectorFailed: boolean,
): ConstraintResult {
  let kept = [...attempts]
  const steps: TraceStep[] = []
  let violated: LocalityConstraint | null = null
  for (const constraint of constraints) {
    const carried = [...labels].filter((label) =>
      constraint.labels.some((constrained) => coversLabel(constrained, label)),
    )
    if (carried.length === 0 && !detectorFailed) {
      steps.push({
        rule: constraint.name,
        outcome: 'constraint',
        why: `request carries none of [${constraint.labels.join(', ')}]: no effect`,
      })
      continue
    }
    const because = detectorFailed
      ? `a PII detector failed, so the request counts as carrying [${constraint.labels.join(', ')}]`
      : `request carries ${carried.join(', ')} (constrained: [${constraint.labels.join(', ')}])`
    const removed = kept.filter((target) => target.locality !== constraint.locality)
    kept = kept.filter((target) => target.locality === constraint.locality)
    const effect =
      removed.length === 0
        ? `every attempt is already ${constraint.locality}`
        : `removed ${removed.map((t) => `${t.locality} ${t.backend}`).join(', ')}`
    steps.push({
      rule: constraint.name,
      outcome: 'constraint',
      why: `${because}: ${effect}${kept.length === 0 ? `; nothing ${constraint.locality} left to try` : ''}`,
    })
    if (kept.length === 0 && violated === null) violated = constraint
  }
  return { attempts: kept, steps, violated }
}

/** True when `constrained` covers `label`: the same label, or `pii` for `pii:card`. */
export function coversLabel(constrained: string, label: string): boolean {
  return (
    label === constrained || (!constrained.includes(':') && label.startsWith(`${constrained}:`))
  )
}
