import type { Decision } from './decision-entry.ts'

/**
 * How the decision log marks a request sent to an external provider (Bedrock) rather than
 * a pod (docs/shared-state.md): its strategy, and the outcome of its end. The scorer writes
 * one when it hands a request back to the edge (control-plane/scorer/state/log-decision.ts),
 * the edge when it decided the request alone (workers/app/edge-decision-log.ts). Its pool
 * is then the provider and its pod the provider's model; nothing was matched or predicted.
 */
export const externalStrategy = 'external'
export const externalOutcome = 'served-by-edge'

export function isExternalDecision(decision: Pick<Decision, 'strategy'>): boolean {
  return decision.strategy === externalStrategy
}
