import { z } from 'zod'
import { RequestId } from '../openai/request-id.ts'

const Count = z.int().min(0)

/** What the scorer decided for a request, written when it sends it to a pod. */
export const DecidedEntry = z.strictObject({
  kind: z.literal('decided'),
  atMs: z.number(),
  /**
   * What keys the request: the id the edge signed, or the scorer's own. Never a client's:
   * two tenants sending the same x-request-id are two requests.
   */
  requestId: RequestId,
  /** The client's x-request-id, when it is a request id (validRequestId) and not requestId. */
  clientRequestId: RequestId.optional(),
  replica: z.string(),
  /** From the edge's signed claims; null for an unsigned request (local trials). */
  tenant: z.string().nullable(),
  /** Policy and rule that chose the backend, when the scorer evaluated the policy itself. */
  policy: z.string().nullable(),
  rule: z.string().nullable(),
  /** The GatewayBackend served; null when the edge chose it and named none. */
  backend: z.string().nullable(),
  pool: z.string(),
  pod: z.string(),
  strategy: z.string(),
  model: z.string(),
  promptTokens: Count,
  matchedTokens: Count,
  predictedTtftMs: z.number(),
  heldMs: z.number(),
})
export type DecidedEntry = z.infer<typeof DecidedEntry>

/** How a request that went to a pod ended (see proxyToPod's outcomes). */
export const EndedEntry = z.strictObject({
  kind: z.literal('ended'),
  atMs: z.number(),
  requestId: RequestId,
  pod: z.string(),
  /** Arrival to first token at the scorer; null when none came or the answer was not streamed. */
  ttftMs: z.number().nullable(),
  /** Arrival to the end of the answer at the scorer. */
  latencyMs: z.number(),
  /** usage.prompt_tokens_details.cached_tokens as the pod reported it. */
  cachedTokens: Count.nullable(),
  outputTokens: Count.nullable(),
  /** completed, failed-before-bytes, failed-after-bytes, client-gone; with the status. */
  outcome: z.string(),
  status: z.int().nullable(),
})
export type EndedEntry = z.infer<typeof EndedEntry>

export const DecisionEntry = z.discriminatedUnion('kind', [DecidedEntry, EndedEntry])
export type DecisionEntry = z.infer<typeof DecisionEntry>

/** An entry as the log holds it: its id orders entries (a Redis stream id, ms-seq). */
export interface StoredDecisionEntry {
  id: string
  entry: DecisionEntry
}

/** A decision with its end, once there is one. */
export interface Decision extends Omit<DecidedEntry, 'kind'> {
  id: string
  end: Omit<EndedEntry, 'kind' | 'requestId'> | null
}

/**
 * Decisions in log order, each with the end written for it later. A retried request has a
 * decision per pod tried: an end goes to the latest open decision of its request on its pod.
 * Ends whose decision is not among `entries` (trimmed, or before the window) are left out.
 */
export function joinDecisions(entries: readonly StoredDecisionEntry[]): Decision[] {
  const decisions: Decision[] = []
  const open = new Map<string, Decision>()
  for (const { id, entry } of entries) {
    const key = `${entry.requestId}\n${entry.pod}`
    if (entry.kind === 'decided') {
      const { kind: _, ...decided } = entry
      const decision: Decision = { id, ...decided, end: null }
      decisions.push(decision)
      open.set(key, decision)
      continue
    }
    const decision = open.get(key)
    if (!decision) continue
    const { kind: _, requestId: __, ...end } = entry
    decision.end = end
    open.delete(key)
  }
  return decisions
}

/** Compares two log ids (ms-seq). */
export function compareEntryIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number)
  const [bm = 0, bs = 0] = b.split('-').map(Number)
  return am - bm || as - bs
}
