import type { RoutingStrategy } from '../routing-strategy.ts'
import { defineStrategy } from './define-strategy.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'

/**
 * A plain Kubernetes Service (kube-proxy in IPVS `rr` mode): the next candidate in turn,
 * whatever its load or cache. The position advances on every decision, so a pod that leaves
 * the list shifts the turn but never stalls it.
 */
export function createRoundRobinStrategy(): RoutingStrategy {
  let turn = 0
  return {
    name: 'round-robin',
    choose(request, candidates) {
      if (candidates.length === 0) return noCandidateDecision('round-robin')
      const index = turn % candidates.length
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER
      const chosen = candidates[index]?.name ?? null
      return {
        pod: chosen,
        reason: `round-robin: ${chosen} is next in turn (${index + 1} of ${candidates.length})`,
        scores: candidates.map((pod) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: null,
        })),
      }
    },
  }
}

/** round-robin as a routing-strategy plugin (registered in strategy-registry.ts). */
export const roundRobinStrategy = defineStrategy({
  name: 'round-robin',
  description: 'a plain Kubernetes Service.',
  create: () => createRoundRobinStrategy(),
})
