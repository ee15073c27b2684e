import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import { kinferenceHeaders } from '../protocol/kinference-headers.ts'
import { findTenant } from './find-tenant.ts'

/**
 * The x-kinference-* headers of an answer that show how the gateway routed it: policy,
 * rule, backend, pool, pod, matched tokens and predicted TTFT (decision), the router's
 * reason with the runner-up pod's prediction (reason), the backends passed over and why
 * (fallback), a pool found saturated (saturated). Written by the scorer
 * (control-plane/scorer/serving/serve-on-pool.ts, handle-route.ts) and the edge
 * (workers/app/serve-decision.ts), the fallback from the notes of the attempt planner
 * (shared/attempts/attempt-planner.ts). Together they show the pools' load, that is, what every
 * other tenant sharing them is doing.
 */
export const decisionHeaderNames = [
  kinferenceHeaders.decision,
  kinferenceHeaders.reason,
  kinferenceHeaders.fallback,
  kinferenceHeaders.saturated,
] as const

/**
 * The simulated pods' modelled queue, TTFT and end-to-end times
 * (control-plane/lab/sim/handle-generation.ts), which the scorer passes on with the pod's
 * answer: the queue time is the pod's load. vLLM sends no such header.
 */
export const simHeaderPrefix = 'x-kinference-sim-'

/** Whether a response header is one of those above (names compared case-insensitively). */
export function isDecisionHeader(name: string): boolean {
  const lower = name.toLowerCase()
  return (
    (decisionHeaderNames as readonly string[]).includes(lower) || lower.startsWith(simHeaderPrefix)
  )
}

/**
 * Whether a tenant's answers may carry the decision headers: its own `decisionHeaders`,
 * else its policy's (Hidden by default). An unknown tenant, or none (''), sees nothing.
 */
export function decisionHeadersVisible(snapshot: ConfigSnapshot, tenant: string): boolean {
  const governing = findTenant(snapshot, tenant)
  if (governing === null) return false
  const setting = governing.tenant.decisionHeaders ?? governing.policy.spec.decisionHeaders
  return setting === 'Visible'
}

/** Removes the decision headers from `headers` (an answer on its way to a tenant). */
export function removeDecisionHeaders(headers: Headers): void {
  const names = [...headers.keys()].filter(isDecisionHeader)
  for (const name of names) headers.delete(name)
}
