import type { z } from 'zod'
import { DynamoParameters } from '../../crd/routing-strategy.ts'
import type { PodCandidate, RoutingRequest, RoutingStrategy } from '../routing-strategy.ts'
import { formatRange } from './format-range.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'
import { pickMaxScore } from './pick-max-score.ts'

export type DynamoStrategyParameters = z.output<typeof DynamoParameters>

export interface DynamoCost {
  prefillBlocks: number
  decodeBlocks: number
  cost: number
}

/**
 * Dynamo's default worker cost in blocks (DYN `docs/components/router/router-concepts.md`,
 * `lib/kv-router/src/scheduling/selector/default.rs`):
 *
 *   cost = prefill_load_scale × max(active_prefill_blocks + incoming_prompt_blocks
 *                                   − overlap_score_credit × overlap_blocks, 0) + decode_blocks
 *
 * Blocks are fractional tokens ÷ block size, as Dynamo divides its token counts. Active prefill
 * is the router-tracked uncached prompt work in flight (`pendingPrefillTokens`), overlap the
 * pod's cached leading blocks (device tier only: no host or disk tiers here), decode the
 * router-tracked KV footprint of the requests in flight (`activeTokens`, Dynamo's
 * `router_track_active_blocks`). Dynamo also adds the request's own blocks not yet active on the
 * worker to the decode term; the router does not know which in-flight blocks a pod shares with
 * this request, and the full prompt's blocks would add the same constant to every pod, which
 * changes neither the minimum nor the softmax over normalised costs, so the term is left out.
 */
export function dynamoCost(
  request: RoutingRequest,
  pod: PodCandidate,
  parameters: DynamoStrategyParameters,
): DynamoCost {
  const rawPrefill = (pod.load.pendingPrefillTokens + request.promptTokens) / request.blockSize
  const prefillBlocks = Math.max(rawPrefill - parameters.overlapScoreCredit * pod.cachedBlocks, 0)
  const decodeBlocks = pod.load.activeTokens / request.blockSize
  return {
    prefillBlocks,
    decodeBlocks,
    cost: parameters.prefillLoadScale * prefillBlocks + decodeBlocks,
  }
}

/**
 * Dynamo's softmax over normalised costs (`softmax_sample_index` in `selector/default.rs`):
 * weight `exp(−(cost − min) / ((max − min) × temperature))`, uniform when all costs are equal;
 * the first row whose cumulative probability reaches the sample wins.
 */
export function softmaxProbabilities(costs: readonly number[], temperature: number): number[] {
  const min = Math.min(...costs)
  const max = Math.max(...costs)
  if (min === max) return costs.map(() => 1 / costs.length)
  const weights = costs.map((cost) => Math.exp(-(cost - min) / ((max - min) * temperature)))
  const sum = weights.reduce((total, weight) => total + weight, 0)
  return weights.map((weight) => weight / sum)
}

function sampleIndex(probabilities: readonly number[], sample: number): number {
  let cumulative = 0
  for (let i = 0; i < probabilities.length; i++) {
    cumulative += probabilities[i] as number
    if (sample <= cumulative) return i
  }
  return probabilities.length - 1
}

/**
 * NVIDIA Dynamo's KV router with its default selector: the lowest block cost wins, exact ties
 * at random; a `temperature` above 0 samples with softmax over the normalised costs instead.
 */
export function createDynamoStrategy(
  parameters: DynamoStrategyParameters = DynamoParameters.parse({}),
): RoutingStrategy {
  return {
    name: 'dynamo',
    choose(request, candidates, context) {
      if (candidates.length === 0) return noCandidateDecision('dynamo')
      const costs = candidates.map((pod) => dynamoCost(request, pod, parameters))
      const values = costs.map((c) => c.cost)
      let best: number
      let how: string
      if (parameters.temperature > 0) {
        const probabilities = softmaxProbabilities(values, parameters.temperature)
        best = sampleIndex(probabilities, context.random())
        how = `sampled at temperature ${parameters.temperature} (p ${(probabilities[best] ?? 0).toFixed(2)})`
      } else {
        best = pickMaxScore(
          values.map((value) => -value),
          context.random,
        )
        how = 'lowest cost'
      }
      const chosen = candidates[best]
      const cost = costs[best]
      if (chosen === undefined || cost === undefined) return noCandidateDecision('dynamo')
      const others = values.filter((_, i) => i !== best)
      return {
        pod: chosen.name,
        reason:
          `dynamo: ${chosen.name} ${how}, ${cost.cost.toFixed(1)} blocks ` +
          `(${parameters.prefillLoadScale} × prefill ${cost.prefillBlocks.toFixed(1)} + decode ` +
          `${cost.decodeBlocks.toFixed(1)})` +
          (others.length === 0
            ? ', the only candidate'
            : ` vs ${formatRange(others, 1)} on the others`),
        scores: candidates.map((pod, i) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: values[i] ?? null,
        })),
      }
    },
  }
}
