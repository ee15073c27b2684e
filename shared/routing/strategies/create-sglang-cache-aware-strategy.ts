import { z } from 'zod'
import type { PodCandidate, RoutingStrategy } from '../routing-strategy.ts'
import {
  type ApproximateRadixTree,
  createApproximateRadixTree,
  type PrefixMatch,
} from './create-approximate-radix-tree.ts'
import { defineStrategy } from './define-strategy.ts'
import { fraction } from './fraction.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'

/** A pool’s `routing.sglangCacheAware` block, with the SGLang router launcher’s defaults. */
export const SglangCacheAwareParameters = z.strictObject({
  cacheThreshold: fraction
    .default(0.3)
    .describe(
      'Match rate above which the best-matching worker is chosen: the router launcher’s default (SGLang sgl-router router_args.py; SMG model_gateway/src/main.rs), not the 0.5 of the Rust struct.',
    ),
  balanceAbsThreshold: z
    .int()
    .min(0)
    .default(64)
    .describe(
      'In-flight gap (max − min) above which, together with the relative test, the least-loaded worker is chosen: launcher default (router_args.py; SMG main.rs), not the struct’s 32.',
    ),
  balanceRelThreshold: z
    .number()
    .min(1)
    .default(1.5)
    .describe(
      'Ratio max / min above which, together with the absolute test, the least-loaded worker is chosen: launcher default (router_args.py; SMG main.rs), not the struct’s 1.1.',
    ),
  evictionIntervalSeconds: z
    .int()
    .positive()
    .default(120)
    .describe(
      'Tree eviction period: launcher default (router_args.py eviction_interval_secs; SMG main.rs eviction_interval), not the struct’s 30.',
    ),
  maxTreeSize: z
    .int()
    .positive()
    .default(2 ** 26)
    .describe(
      'Largest approximate tree per worker, in characters as SGLang counts it (tenant_char_count): launcher default 2^26 (router_args.py; SMG main.rs), not the struct’s 10,000.',
    ),
})

export type SglangCacheAwareStrategyParameters = z.output<typeof SglangCacheAwareParameters>

function percent(value: number): string {
  return `${Math.round(value * 100)}%`
}

/**
 * SGLang router's `cache_aware` policy as its current code runs it (SMG
 * `model_gateway/src/policies/cache_aware.rs`, string tree in `crates/kv_index/src/string_tree.rs`;
 * SGL `sgl-model-gateway/src/policies/cache_aware.rs`), over HTTP, i.e. on the raw characters of
 * the request:
 *
 * 1. Loads are this router's in-flight counts. If `max − min > balanceAbsThreshold` and
 *    `max > balanceRelThreshold × min`, the least-loaded pod goes (shortest queue).
 * 2. Otherwise, match rate = characters of the longest prefix in the model's tree ÷ prompt
 *    characters; above `cacheThreshold` the tenant holding it goes, else the least-loaded pod.
 *    (The first sgl-router sent a miss to the pod with the smallest tree; both SGLang's gateway
 *    and SMG have sent it to the least-loaded pod since that spiralled, SGL PR #14305.)
 * 3. The least-loaded pod is the first by (in flight, requests routed so far, candidate order),
 *    SMG's tie-break (SMG PR #1714).
 * 4. Every decision inserts the prompt into the tree under the chosen pod (`onRouted`).
 * 5. Every `evictionIntervalSeconds`, each tenant's leaves are evicted, least recently used
 *    first, until it holds at most `maxTreeSize` characters. SGLang runs this on a timer thread;
 *    here it runs lazily at the first call past the interval. SGLang counts this limit in
 *    characters per tenant (`tenant_char_count`), although its docs say nodes.
 *
 * The candidates are the healthy workers: the tree only answers with a candidate (the deepest
 * node's first candidate tenant; SGLang takes the first key of that node's hash map).
 */
export function createSglangCacheAwareStrategy(
  parameters: SglangCacheAwareStrategyParameters = SglangCacheAwareParameters.parse({}),
): RoutingStrategy {
  const trees = new Map<string, ApproximateRadixTree>()
  const routedByPod = new Map<string, number>()
  let lastEvictionMs: number | null = null

  function leastLoaded(candidates: readonly PodCandidate[]): number {
    let best = 0
    for (let i = 1; i < candidates.length; i++) {
      const pod = candidates[i] as PodCandidate
      const current = candidates[best] as PodCandidate
      const routed = routedByPod.get(pod.name) ?? 0
      const currentRouted = routedByPod.get(current.name) ?? 0
      if (
        pod.load.inFlight < current.load.inFlight ||
        (pod.load.inFlight === current.load.inFlight && routed < currentRouted)
      )
        best = i
    }
    return best
  }

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
      const shortest = leastLoaded(candidates)
      if (
        max - min > parameters.balanceAbsThreshold &&
        max > parameters.balanceRelThreshold * min
      ) {
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
      return decide(
        shortest,
        `best match ${percent(rate)} ≤ ${percent(parameters.cacheThreshold)}, ` +
          `least loaded ${candidates[shortest]?.name} (${min} in flight)`,
      )
    },
    onRouted(request, pod, context) {
      evictWhenDue(context.nowMs)
      treeOf(request.model).insert(request.promptText, pod, context.nowMs)
      routedByPod.set(pod, (routedByPod.get(pod) ?? 0) + 1)
    },
    onPodRemoved(pod) {
      for (const tree of trees.values()) tree.removeTenant(pod)
      routedByPod.delete(pod)
    },
  }
}

/** sglang-cache-aware as a routing-strategy plugin (registered in strategy-registry.ts). */
export const sglangCacheAwareStrategy = defineStrategy({
  name: 'sglang-cache-aware',
  description: 'SGLang cache-aware policy.',
  parameters: { block: 'sglangCacheAware', schema: SglangCacheAwareParameters },
  create: (parameters) => createSglangCacheAwareStrategy(parameters),
})
