/**
 * The x-kinference-* headers the edge and the scorer agree on besides the signed claims
 * (shared/auth/edge-signature.ts) and the route call's own (shared/scorer-api/route-protocol.ts).
 */
export const kinferenceHeaders = {
  /** Request: the client's own labels, comma-separated (e.g. `confidential`, `batch`). */
  labels: 'x-kinference-labels',
  /**
   * Answer: how the request was routed, the policy's part (shared/policy/decision-header.ts)
   * before the pool's (pod, matched tokens, predicted TTFT).
   */
  decision: 'x-kinference-decision',
  /** Answer: the router's reason, with the runner-up pod's prediction. */
  reason: 'x-kinference-reason',
  /** Answer: the backends passed over before the one that answered, and why. */
  fallback: 'x-kinference-fallback',
  /** The scorer's 503 for a pool that is full when the edge may try another attempt: `1`. */
  saturated: 'x-kinference-saturated',
} as const
