import type { PolicyDecision, UpstreamTarget } from './policy-decision.ts'

type Serve = Extract<PolicyDecision, { kind: 'serve' }>

/**
 * The policy's part of x-kinference-decision: which policy and rule, which backend, where
 * and under which model. The edge and the scorer (when it decided) write the same text;
 * the pool's part (pod, predicted TTFT) follows it.
 */
export function decisionHeaderOf(
  decision: Pick<Serve, 'policy' | 'rule'>,
  attempt: UpstreamTarget,
): string {
  return `policy=${decision.policy}; rule=${decision.rule}; backend=${attempt.backend}; locality=${attempt.locality}; model=${attempt.model}`
}

/** Header text: printable ASCII only, bounded. */
export function asciiHeaderValue(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 512)
}
