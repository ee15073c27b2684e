import type { StepCostModel } from '../../../../shared/gpu/step-cost-model.ts'

/** One request as the shared-step bound reads it: its tokens and what it found cached. */
export interface StepWorkRequest {
  /** Prompt tokens served from cache (counted as context, not computed). */
  cachedTokens: number
  /** Prompt tokens computed. */
  uncachedTokens: number
  outputTokens: number
}

export interface SharedStepWork {
  /** Least busy seconds one pod spends per request, prefill and decode in the same steps. */
  secondsPerRequest: number
  /** Least steps per request: the budget's, the sequence limit's and the KV's, the largest. */
  stepsPerRequest: number
}

/** What bounds a pod's steps: its token budget, its sequence limit and its KV. */
export interface StepLimits {
  /** max_num_batched_tokens. */
  budget: number
  /** max_num_seqs. */
  maxNumSeqs: number
  /** Tokens one pod's KV holds (its blocks times the block size). */
  kvTokens: number
}

/**
 * The least busy time per request of a pod whose steps carry prefill chunks and decodes
 * together, as vLLM's scheduler does (one token budget per step), under the roofline
 * step cost `t(T tokens) + kv·context + attn·area` (shared/gpu/step-cost-model.ts):
 *
 * - Context read and attention area are sums over a request's steps whatever step they
 *   land in: decodes read p + 1 … p + o − 1 (o − 1 steps; the first token comes with the
 *   last prefill chunk), a prefill of u after c cached in chunks of at most B reads at
 *   least (u/B)·(c + u/2 + B/2) (fewer, full chunks read least) and attends over
 *   u·c + u²/2 (any chunking).
 * - The per-step part g(T) = t(T) with no context is convex in T (fixed cost plus the
 *   larger of weight streaming and GEMMs), so S steps carrying τ tokens cost at least
 *   S·g(τ/S), which grows with S; and a pod needs at least S = max(τ/B, decodes/M, K/KV)
 *   steps: a step holds at most B tokens and M sequences, and the requests decoding in it
 *   hold at most KV tokens of KV. A request decoding its j-th token holds at least the
 *   u + j tokens it computed itself (its cached prefix may be shared), so over its o − 1
 *   decode steps it takes K_r = (o − 1)·(u + o/2) token-steps of KV, K the sum. A
 *   schedule that staggers requests keeps that average, not the peak u + o, so the peak
 *   would not bound the batch.
 *
 * Averaged over the requests, that is the time of each; a pod serves at most one over it
 * per second. It dominates both a prefill-only and a decode-only rate, which each leave
 * out the other's work.
 */
export function sharedStepWork(
  requests: readonly StepWorkRequest[],
  cost: StepCostModel,
  limits: StepLimits,
): SharedStepWork {
  const { budget, maxNumSeqs, kvTokens } = limits
  const n = Math.max(1, requests.length)
  let tokens = 0
  let decodes = 0
  let context = 0
  let area = 0
  let held = 0
  for (const { cachedTokens: c, uncachedTokens: u, outputTokens: o } of requests) {
    const d = Math.max(0, o - 1)
    tokens += u + d
    decodes += d
    context += (u / budget) * (c + u / 2 + budget / 2) + d * (c + u + o / 2)
    area += u * c + (u * u) / 2
    held += d * (u + o / 2)
  }
  const stepsPerRequest = Math.max(tokens / budget, decodes / maxNumSeqs, held / kvTokens) / n
  const stepMs = (tokens: number, decodeContext: number, prefillAttention: number) =>
    cost.stepMs({ tokens, decodeContext, prefillContext: 0, prefillAttention })
  const idleMs = stepMs(0, 0, 0)
  const perStepMs =
    stepsPerRequest > 0 ? stepsPerRequest * stepMs(tokens / n / stepsPerRequest, 0, 0) : 0
  // The cost model is linear in context and area: what they add over an empty step.
  const contextMs = stepMs(0, context / n, 0) - idleMs
  const areaMs = stepMs(0, 0, area / n) - idleMs
  return { secondsPerRequest: (perStepMs + contextMs + areaMs) / 1000, stepsPerRequest }
}
