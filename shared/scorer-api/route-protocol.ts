import { z } from 'zod'
import type { RequestKind } from '../openai/openai-request.ts'
import { PolicyDecision } from '../policy/policy-decision.ts'

/**
 * One edge → scorer pass for a request whose policy depends on the pools' live status.
 * The edge sends the policy (its bundle, see policyBundleOf) and the request together; the
 * scorer tokenizes and looks the prompt up once per pool, evaluates the policy with those
 * statuses and the exact prompt length, and serves the first local attempt itself. When
 * policy says otherwise (an external attempt, a rejection, a deferral, every local pool
 * saturated) it answers with the decision instead, for the edge to carry on from.
 */
export const routePaths = {
  chat: '/v1/kinference/route/chat/completions',
  completion: '/v1/kinference/route/completions',
} as const satisfies Record<RequestKind, string>

/** Set on a scorer answer that is a decision for the edge, not a pod's answer. */
export const decidedHeader = 'x-kinference-decided'

/** Prompt tokens as the pool's tokenizer counts them, on every answer the scorer serves. */
export const promptTokensHeader = 'x-kinference-prompt-tokens'

/** What the edge carries on from when the scorer did not serve the request itself. */
export const RouteDecision = z.strictObject({
  decision: PolicyDecision,
  /** The first attempt of decision.attempts the edge should make (the ones before were tried). */
  from: z.int().min(0),
  /** Why earlier attempts were passed over, for x-kinference-fallback. */
  notes: z.array(z.string()),
  /** Exact prompt length (the largest over the pools asked), for quotas and traces. */
  promptTokens: z.int().min(0),
})
export type RouteDecision = z.infer<typeof RouteDecision>

const newline = 0x0a

/**
 * The body of a route call: the bundle's JSON, a newline, the client's body as it came. A
 * JSON text from JSON.stringify never holds a raw newline, so the first one splits them,
 * and the client's bytes reach the pod untouched.
 */
export function routeEnvelope(bundleJson: string, body: string): string {
  if (bundleJson.includes('\n')) throw new TypeError('the bundle must be compact JSON')
  return `${bundleJson}\n${body}`
}

/** The bundle's JSON text and the client's body; null when there is no newline. */
export function splitRouteEnvelope(
  bytes: Uint8Array,
): { bundleJson: string; body: Uint8Array } | null {
  const at = bytes.indexOf(newline)
  if (at < 0) return null
  return {
    bundleJson: new TextDecoder().decode(bytes.subarray(0, at)),
    body: bytes.subarray(at + 1),
  }
}
