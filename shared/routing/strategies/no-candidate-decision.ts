import type { RoutingDecision } from '../routing-strategy.ts'

/** What every strategy answers for an empty candidate list: no pod, and why. */
export function noCandidateDecision(strategy: string): RoutingDecision {
  return { pod: null, reason: `${strategy}: no candidate pod`, scores: [] }
}
