import type {
  PodCandidate,
  PodScore,
  RoutingDecision,
  RoutingRequest,
  RoutingStrategy,
} from './routing-strategy.ts'
import { effectiveWork, type TtftFeatures } from './ttft-model.ts'

export interface KinferenceStrategyOptions {
  /** Per-step token budget of the pool's pods (max_num_batched_tokens). */
  stepBudget: number
}

/** Tokens of a prompt a pod would serve from cache: vLLM never hits the last token. */
export function cachedTokensOf(request: RoutingRequest, cachedBlocks: number): number {
  const cap = Math.floor((request.promptTokens - 1) / request.blockSize) * request.blockSize
  return Math.max(0, Math.min(cachedBlocks * request.blockSize, cap))
}

/**
 * What the pod would have to do before this request's first token. The queue is the
 * uncached prefill this replica sent and has not seen answered, plus, when the pod's
 * own metrics show more waiting requests than that, the difference (traffic through
 * other replicas) at this request's size. Decodes are running requests past prefill.
 */
export function ttftFeatures(
  request: RoutingRequest,
  pod: PodCandidate,
  stepBudget: number,
): TtftFeatures {
  const { load, metrics } = pod
  const unseen = metrics ? Math.max(0, metrics.waiting - load.pendingRequests) : 0
  const decoding = metrics
    ? Math.max(0, metrics.running - load.pendingRequests)
    : Math.max(0, load.inFlight - load.pendingRequests)
  return {
    queuedTokens: load.pendingPrefillTokens + unseen * request.promptTokens,
    uncachedTokens: request.promptTokens - cachedTokensOf(request, pod.cachedBlocks),
    decoding,
    stepBudget,
  }
}

export function predictTtftMs(
  request: RoutingRequest,
  pod: PodCandidate,
  stepBudget: number,
): number {
  return (
    pod.ttft.overheadMs +
    pod.ttft.msPerToken * effectiveWork(ttftFeatures(request, pod, stepBudget))
  )
}

/**
 * Kinference: send each request to the pod with the lowest predicted time to first token.
 * Cache overlap lowers a pod's uncached work, its queue raises it, so a warm pod wins
 * until its queue makes it slower than a cold one; then the cold one wins and becomes
 * warm (no hot spot). Near-ties (within 2% or 2 ms) go to the pod with the least KV
 * footprint in flight, then at random, so idle pods share cold traffic.
 */
export function createKinferenceStrategy(options: KinferenceStrategyOptions): RoutingStrategy {
  return {
    name: 'kinference',
    choose(request, candidates, context): RoutingDecision {
      if (candidates.length === 0)
        return { pod: null, reason: 'kinference: no candidate pod', scores: [] }
      const scores: PodScore[] = candidates.map((pod) => ({
        pod: pod.name,
        cachedTokens: cachedTokensOf(request, pod.cachedBlocks),
        predictedTtftMs: predictTtftMs(request, pod, options.stepBudget),
        score: null,
      }))
      const best = Math.min(...scores.map((s) => s.predictedTtftMs as number))
      const slack = Math.max(2, best * 0.02)
      const near = candidates.filter(
        (_, i) => (scores[i]?.predictedTtftMs as number) <= best + slack,
      )
      const lightest = Math.min(...near.map((pod) => pod.load.activeTokens))
      const finalists = near.filter((pod) => pod.load.activeTokens === lightest)
      const chosen = finalists[Math.floor(context.random() * finalists.length)] as PodCandidate
      const mine = scores.find((s) => s.pod === chosen.name) as PodScore
      const others = scores
        .filter((s) => s.pod !== chosen.name)
        .map((s) => s.predictedTtftMs as number)
      const runnerUp = others.length > 0 ? Math.min(...others) : null
      return {
        pod: chosen.name,
        reason:
          `kinference: predicted TTFT ${Math.round(mine.predictedTtftMs as number)} ms with ${mine.cachedTokens}/${request.promptTokens} tokens cached` +
          (runnerUp === null ? '' : `, next best ${Math.round(runnerUp)} ms`),
        scores,
      }
    },
  }
}
