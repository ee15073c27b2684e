import type { ConfigSnapshot } from '../config/config-snapshot.ts'

/**
 * The fields the deciding rule's burst action lets an external attempt drop (its
 * dropFields); [] for any other action, or a rule the snapshot does not have.
 */
export function burstDropFields(
  snapshot: ConfigSnapshot,
  decided: { policy: string; rule: string },
): readonly string[] {
  const policy = Object.hasOwn(snapshot.policies, decided.policy)
    ? snapshot.policies[decided.policy]
    : undefined
  const rule = policy?.spec.rules.find((r) => r.name === decided.rule)
  return rule?.action.burst?.dropFields ?? []
}
