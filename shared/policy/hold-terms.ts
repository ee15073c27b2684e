import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import type { ServiceLevel } from '../crd/service-level.ts'
import type { HoldTerms } from '../routing/pool-router.ts'
import { ttftObjective } from './apply-service-level.ts'

/** The service level of a policy's rule, when it has one. */
export function ruleServiceLevel(
  snapshot: ConfigSnapshot,
  policyId: string,
  rule: string,
): ServiceLevel | undefined {
  return snapshot.policies[policyId]?.spec.rules.find((r) => r.name === rule)?.serviceLevel
}

/**
 * How the pool may hold a request the rule serves: its priority band, and, where the rule
 * holds for its objective (maxHoldMs), the latest time it may still go to a pod: the
 * hold's end, never past the request's objective. Undefined: held as the pool's late
 * binding holds every request (band 0, maxHoldMs).
 */
export function holdTermsOf(
  level: ServiceLevel | undefined,
  requestedMs: number | undefined,
  nowMs: number,
): HoldTerms | undefined {
  if (!level) return undefined
  const band = level.priority
  if (level.maxHoldMs === 0) return band === 0 ? undefined : { band }
  const objectiveMs = ttftObjective(level, requestedMs).ttftMs
  const deadlineMs = nowMs + Math.min(level.maxHoldMs, objectiveMs)
  return { band, deadlineMs, expires: level.whenUnattainable !== 'Serve' }
}
