import type { RouteResult } from '../route-result.ts'
import type { RoutingRequest } from '../routing-strategy.ts'

/**
 * What a peer's admission rule says about one arriving request. 529 is Dynamo's: its HTTP
 * frontend answers an admission-control rejection ("all workers busy") with 529 unless the
 * operator sets DYN_HTTP_OVERLOAD_STATUS_CODE (its docs still say 503).
 */
export type AdmissionVerdict =
  | { kind: 'admit' }
  | {
      kind: 'refuse'
      status: 429 | 503 | 529
      code: string
      message: string
      retryAfterSeconds: number | null
    }

/**
 * A peer's own admission control, run on the router's view of the pool when a request
 * arrives, before it is sent: pure, so the DES can hold every peer to its own rule.
 */
export interface AdmissionGate {
  /** Whose rule this is, for reports (e.g. "llm-d flow control"). */
  readonly name: string
  admit(
    route: RouteResult,
    request: RoutingRequest,
    nowMs: number,
    random: () => number,
  ): AdmissionVerdict
}

/** The verdict of a gate that lets the request through. */
export const admitted: AdmissionVerdict = Object.freeze({ kind: 'admit' })
