import type { RoutingStrategy } from '../routing-strategy.ts'
import { defineStrategy } from './define-strategy.ts'
import { formatRange } from './format-range.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'
import { pickMaxScore } from './pick-max-score.ts'

/**
 * Fewest requests in flight, counted by this router (AIBrix `least-request`, AIB
 * `pkg/plugins/gateway/algorithms/least_request.go`; Envoy's LEAST_REQUEST): blind to cache
 * and prompt size. Ties break at random so idle pods share the traffic.
 */
export function createLeastRequestStrategy(): RoutingStrategy {
  return {
    name: 'least-request',
    choose(request, candidates, context) {
      if (candidates.length === 0) return noCandidateDecision('least-request')
      const inFlight = candidates.map((pod) => pod.load.inFlight)
      const best = pickMaxScore(
        inFlight.map((count) => -count),
        context.random,
      )
      const chosen = candidates[best]?.name ?? null
      const others = inFlight.filter((_, index) => index !== best)
      const reason =
        others.length === 0
          ? `least-request: ${chosen} is the only candidate (${inFlight[best]} in flight)`
          : `least-request: ${chosen} has ${inFlight[best]} in flight vs ${formatRange(others)} on the others`
      return {
        pod: chosen,
        reason,
        scores: candidates.map((pod) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: pod.load.inFlight,
        })),
      }
    },
  }
}

/** least-request as a routing-strategy plugin (registered in strategy-registry.ts). */
export const leastRequestStrategy = defineStrategy({
  name: 'least-request',
  description: 'fewest requests in flight.',
  create: () => createLeastRequestStrategy(),
})
