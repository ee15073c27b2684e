import type { InferencePolicySpec } from '../crd/inference-policy.ts'
import type { PolicyRequest } from './policy-decision.ts'

/**
 * The labels rules and constraints see. When a detector failed the request counts as
 * carrying every label any constraint names (fail closed), so a rule reserved for
 * labelled requests catches it and a rule excluding them does not.
 */
export function effectiveLabels(
  spec: InferencePolicySpec,
  request: Pick<PolicyRequest, 'labels' | 'detectorFailed'>,
): Set<string> {
  const labels = new Set(request.labels)
  if (request.detectorFailed) {
    for (const constraint of spec.constraints ?? []) {
      for (const label of constraint.labels) labels.add(label)
    }
  }
  return labels
}
