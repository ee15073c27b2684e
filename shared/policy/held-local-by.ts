import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import type { LocalityConstraint } from '../crd/inference-policy.ts'
import { coversLabel } from './apply-constraints.ts'

/**
 * The constraint that keeps this request in the cluster, if any: the policy engine has
 * already removed external attempts, and the edge checks again right before anything
 * leaves, so a bug elsewhere cannot send labelled data out (fail closed). With a failed
 * detector every constraint holds.
 */
export function heldLocalBy(
  snapshot: ConfigSnapshot,
  policyId: string | null,
  labels: readonly string[],
  detectorFailed: boolean,
): LocalityConstraint | null {
  const policies =
    policyId === null ? Object.values(snapshot.policies) : [snapshot.policies[policyId]]
  for (const policy of policies) {
    for (const constraint of policy?.spec.constraints ?? []) {
      if (detectorFailed) return constraint
      if (labels.some((label) => constraint.labels.some((c) => coversLabel(c, label))))
        return constraint
    }
  }
  return null
}
