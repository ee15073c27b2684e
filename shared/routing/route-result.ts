import type { PoolLookup } from './pool-request.ts'
import type { RoutedPod } from './routed-pod.ts'
import type {
  PodCandidate,
  RoutingContext,
  RoutingDecision,
  RoutingStrategy,
} from './routing-strategy.ts'
import { predictTpotMs } from './tpot-prediction.ts'
import { type HostLink, type OnlineTtftModel, predictTtftMs, tierLoad } from './ttft-model.ts'

/** One request routed: the strategy's decision and what it was made on. */
export interface RouteResult {
  decision: RoutingDecision
  /** Kinference's predicted TTFT for every candidate, whichever strategy chose. */
  predictedTtftMs: Map<string, number>
  /** Its predicted time per output token, for every candidate whose KV capacity is known. */
  predictedTpotMs: Map<string, number>
  /** The index's view per pod of the pool (blocks, before trust discounting). */
  indexedBlocks: Map<string, number>
  candidates: PodCandidate[]
}

/** What a route is chosen with: the pool's strategy, its step budget and TTFT model. */
export interface RouteChoice {
  strategy: RoutingStrategy
  stepBudget: number
  ttft: OnlineTtftModel
  /** How kinference prices a CPU-tier load in its predictions; absent or null: never. */
  hostLink?: HostLink | null
}

/**
 * The strategy's choice among `pods` for a looked-up request. Pods the lookup does not name
 * hold none of it (one added since counts as cold; one removed since is simply gone).
 * Unhealthy and excluded pods are left out, unless that leaves nobody (fail open: a
 * possibly-recovered pod beats a certain error). Kinference's predicted TTFT of every
 * candidate comes along (the decision header, saturation and the decision log read it
 * whichever strategy chose), and fills the scores of a strategy that predicts none.
 */
export function chooseRoute(
  pods: readonly RoutedPod[],
  lookup: PoolLookup,
  choice: RouteChoice,
  context: RoutingContext,
  exclude: ReadonlySet<string> = new Set(),
): RouteResult {
  const { strategy, stepBudget, ttft } = choice
  const hostLink = choice.hostLink ?? null
  const request = lookup.request.routing
  const indexedBlocks = new Map(pods.map((pod) => [pod.name, lookup.blocks.get(pod.name) ?? 0]))
  const eligible = pods.filter((pod) => !exclude.has(pod.name))
  const healthy = eligible.filter((pod) => pod.healthy(context.nowMs))
  const candidates = (healthy.length > 0 ? healthy : eligible).map((pod) =>
    pod.candidate(
      indexedBlocks.get(pod.name) ?? 0,
      context.nowMs,
      ttft.model,
      lookup.tierBlocks?.get(pod.name),
    ),
  )
  const decision = strategy.choose(request, candidates, context)
  const predictedTtftMs = new Map(
    candidates.map((pod) => {
      const load = tierLoad(request, pod, stepBudget, hostLink)
      return [pod.name, predictTtftMs(request, pod, stepBudget, load)]
    }),
  )
  const predictedTpotMs = new Map<string, number>()
  for (const pod of candidates) {
    const tpot = predictTpotMs(request, pod)
    if (tpot !== null) predictedTpotMs.set(pod.name, tpot)
  }
  for (const score of decision.scores) {
    score.predictedTtftMs ??= predictedTtftMs.get(score.pod) ?? null
  }
  return { decision, predictedTtftMs, predictedTpotMs, indexedBlocks, candidates }
}
