import type { Decision } from '../../shared/state/decision-entry.ts'

/**
 * How the decision log marks a request sent to an external provider (Bedrock) rather than
 * a pod (control-plane/scorer/state/log-decision.ts, docs/shared-state.md): its strategy,
 * and the outcome its scorer logs when it hands the request back to the edge, which serves
 * it. Its pool is then the provider and its pod the provider's model; nothing was matched
 * or predicted, and the provider's answer (TTFT, tokens, status) is the edge's to count.
 */
export const externalStrategy = 'external'
export const externalOutcome = 'served-by-edge'

export function isExternalDecision(decision: Pick<Decision, 'strategy'>): boolean {
  return decision.strategy === externalStrategy
}
