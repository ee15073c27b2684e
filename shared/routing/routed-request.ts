import type { BlockKeyChain } from '../kv-index/block-keys.ts'
import { admissionWaitMs } from './pod-memory.ts'
import type { PodCandidate, RoutingRequest } from './routing-strategy.ts'
import {
  cachedTokensOf,
  cpuLoad,
  effectiveWork,
  type HostLink,
  ttftFeatures,
  withLoaded,
} from './ttft-model.ts'

/** A request this replica sent to a pod, followed until its end. */
export interface RoutedRequest {
  pod: string
  promptTokens: number
  /** Prompt tokens the pod computes: neither in its GPU cache nor loaded from its CPU tier. */
  uncachedTokens: number
  /** Prompt tokens the pod loads from its CPU tier: new GPU blocks, no prefill. */
  loadedTokens: number
  /** Predicted time of that load (kept out of the TTFT fit, as the admission wait). */
  tierLoadMs: number
  maxTokens: number
  /** Predicted wait for KV memory at dispatch (kept out of the TTFT fit). */
  admissionWaitMs: number
  /** What the index said before trust discounting, for drift. */
  indexedCachedTokens: number
  work: number
  /**
   * Whether this replica was the pod's only sender at dispatch, so saw the whole queue
   * ahead. Only those TTFTs fit the model: with other replicas' work the features cannot
   * see (sent since the metrics, or sized wrong), the fit flattens (a bigger overhead, a
   * smaller slope), and a copy's prefill then looks cheaper than it is.
   */
  sawWholeQueue: boolean
  dispatchedAtMs: number
  firstTokenAtMs: number | null
  /** Its pod's context integral at its first token (RoutedPod.contextIntegral), for its TPOT. */
  contextIntegralAtFirstToken: number
  generated: number
  /** Its block keys until its first token renews their speculative entries (pool-router.ts). */
  speculativeKeys?: BlockKeyChain
}

/**
 * The request as followed once sent to `candidate`'s pod, of whose blocks the index and
 * the tier lookup said the pod held `indexedBlocks` (GPU and CPU, before trust). Whatever
 * the strategy, the pod loads every CPU block continuing its GPU hit (vLLM's connector
 * does), so those are neither computed nor part of its queue.
 */
export function routedRequest(
  request: RoutingRequest,
  candidate: PodCandidate,
  indexedBlocks: number,
  settings: { stepBudget: number; hostLink: HostLink | null },
  nowMs: number,
): RoutedRequest {
  const load = cpuLoad(request, candidate, settings.hostLink)
  const features = ttftFeatures(request, withLoaded(candidate, load), settings.stepBudget)
  return {
    pod: candidate.name,
    promptTokens: request.promptTokens,
    uncachedTokens: features.uncachedTokens,
    loadedTokens: load.tokens,
    tierLoadMs: load.ms,
    maxTokens: request.maxTokens,
    admissionWaitMs: candidate.memory
      ? admissionWaitMs(candidate.memory, features.uncachedTokens + load.tokens)
      : 0,
    indexedCachedTokens: cachedTokensOf(request, indexedBlocks),
    work: effectiveWork(features),
    sawWholeQueue: (candidate.metrics?.foreignRequests ?? 0) === 0,
    dispatchedAtMs: nowMs,
    firstTokenAtMs: null,
    contextIntegralAtFirstToken: 0,
    generated: 0,
  }
}
