import type { z } from 'zod'
import { SglangCacheAwareParameters } from '../../crd/routing-strategy.ts'
import type { RoutingStrategy } from '../routing-strategy.ts'
import {
  type ApproximateRadixTree,
  createApproximateRadixTree,
  type PrefixMatch,
} from './create-approximate-radix-tree.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'

export type SglangCacheAwareStrategyParameters = z.output<typeof SglangCacheAwareParameters>

function percent(value: number): string {
  return `${Math.round(value * 100)}%`
}

/**
 * SGLang router's `cache_aware` policy (SGL `sgl-router/src/policies/cache_aware.rs`, tree in
 * `tree.rs`), over HTTP, i.e. on the raw characters of the request:
 *
 * 1. Loads are this router's in-flight counts. If `max − min > balanceAbsThreshold` and
 *    `max > balanceRelThreshold × min`, the first pod with the fewest goes (shortest queue).
 * 2. Otherwise, match rate = characters of the longest prefix in the model's tree ÷ prompt
 *    characters; above `cacheThreshold` the tenant holding it goes, else the pod with the
 *    smallest tree (fewest characters; a pod never routed to holds 0).
 * 3. Every decision inserts the prompt into the tree under the chosen pod (`onRouted`).
 * 4. Every `evictionIntervalSeconds`, each tenant's leaves are evicted, least recently used
 *    first, until it holds at most `maxTreeSize` characters. SGLang runs this on a timer thread;
 *    here it runs lazily at the first call past the interval. SGLang counts this limit in
 *    characters per tenant (`tenant_char_count`), although its docs say nodes.
 *
 * The candidates are the healthy workers: the tree only answers with a candidate (the deepest
 * node's first candidate tenant; SGLang takes the first key of that node's hash map), and the
 * smallest tree is the smallest among the candidates.
 */
export function createSglangCacheAwareStrategy(
  parameters: SglangCacheAwareStrategyParameters = SglangCacheAwareParameters.parse({}),
): RoutingStrategy {
  const trees = new Map<string, ApproximateRadixTree>()
  let lastEvictionMs: number | null = null

  function evictWhenDue(nowMs: number): void {
    if (lastEvictionMs === null) lastEvictionMs = nowMs
    if (nowMs - lastEvictionMs < parameters.evictionIntervalSeconds * 1000) return
    for (const tree of trees.values()) tree.evictTenantsBySize(parameters.maxTreeSize)
    lastEvictionMs = nowMs
  }

  function treeOf(model: string): ApproximateRadixTree {
    let tree = trees.get(model)
    if (tree === undefined) {
      tree = createApproximateRadixTree()
      trees.set(model, tree)
    }
    return tree
  }

  return {
    name: 'sglang-cache-aware',
    usesPromptText: true,
    choose(request, candidates, context) {
      if (candidates.length === 0) return noCandidateDecision('sglang-cache-aware')
      evictWhenDue(context.nowMs)
      const text = request.promptText
      const tree = treeOf(request.model)
      const match: PrefixMatch = tree.matchPrefix(text, new Set(candidates.map((pod) => pod.name)))
      const rateOf = (chars: number) => (text.length === 0 ? 0 : chars / text.length)
      const decide = (index: number, reason: string) => ({
        pod: candidates[index]?.name ?? null,
        reason: `sglang-cache-aware: ${reason}`,
        scores: candidates.map((pod) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: rateOf(match.charsByTenant.get(pod.name) ?? 0),
        })),
      })

      const loads = candidates.map((pod) => pod.load.inFlight)
      const max = Math.max(...loads)
      const min = Math.min(...loads)
      if (
        max - min > parameters.balanceAbsThreshold &&
        max > parameters.balanceRelThreshold * min
      ) {
        const shortest = loads.indexOf(min)
        return decide(
          shortest,
          `load imbalanced (in flight ${min}–${max}: gap ${max - min} > ${parameters.balanceAbsThreshold} ` +
            `and ${max} > ${parameters.balanceRelThreshold} × ${min}), shortest queue ${candidates[shortest]?.name}`,
        )
      }

      // SGLang's prefix_match refreshes the matched tenant's path whichever branch follows.
      match.touch(context.nowMs)
      const rate = rateOf(match.matchedChars)
      if (rate > parameters.cacheThreshold && match.tenant !== null) {
        return decide(
          candidates.findIndex((pod) => pod.name === match.tenant),
          `${match.tenant} matches ${percent(rate)} of the prompt (> ${percent(parameters.cacheThreshold)})`,
        )
      }
      const sizes = candidates.map((pod) => tree.charCount(pod.name))
      const smallest = sizes.indexOf(Math.min(...sizes))
      return decide(
        smallest,
        `best match ${percent(rate)} ≤ ${percent(parameters.cacheThreshold)}, ` +
          `${candidates[smallest]?.name} has the smallest tree (${sizes[smallest]} chars)`,
      )
    },
    onRouted(request, pod, context) {
      evictWhenDue(context.nowMs)
      treeOf(request.model).insert(request.promptText, pod, context.nowMs)
    },
    onPodRemoved(pod) {
      for (const tree of trees.values()) tree.removeTenant(pod)
    },
  }
}
