import { z } from 'zod'
import type { PodCandidate, RoutingRequest, RoutingStrategy } from '../routing-strategy.ts'
import { cpuMedium } from '../ttft-model.ts'
import { blockIdsOf, createActiveSequences } from './create-active-sequences.ts'
import { defineStrategy } from './define-strategy.ts'
import { formatRange } from './format-range.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'
import { pickMaxScore } from './pick-max-score.ts'

/** A pool’s `routing.dynamo` block, with Dynamo’s published defaults. */
export const DynamoParameters = z.strictObject({
  overlapScoreCredit: z
    .number()
    .min(0)
    .default(1)
    .describe(
      'Credit per cached device block against the prefill load (Dynamo overlap_score_credit, lib/kv-router/src/scheduling/config.rs).',
    ),
  hostCacheHitWeight: z
    .number()
    .min(0)
    .default(0.75)
    .describe(
      'Credit per block held in the worker’s host (CPU) tier continuing its device hit, against the prefill load (Dynamo host_cache_hit_weight; disk_cache_hit_weight 0.25 has no tier here).',
    ),
  prefillLoadScale: z
    .number()
    .min(0)
    .default(1)
    .describe(
      'Weight of the adjusted prefill blocks in the default cost (Dynamo prefill_load_scale, config.rs).',
    ),
  temperature: z
    .number()
    .min(0)
    .default(0)
    .describe(
      '0 picks the lowest cost; above 0 samples with softmax over normalised costs (Dynamo router_temperature, config.rs).',
    ),
  selectionPolicy: z
    .enum(['default', 'lmetric'])
    .default('default')
    .describe(
      'default: cost = prefill_load_scale × adjusted prefill blocks + decode blocks. lmetric: cost = adjusted prefill blocks × (decode blocks + 1) (Dynamo router_selection_policy, docs/components/router/router-concepts.md).',
    ),
  speculativeEntries: z
    .boolean()
    .default(false)
    .describe(
      'Count a routed request’s blocks as cached on its worker before its KV events arrive, for the pool’s kinference speculativeTtlMs (Dynamo router_predicted_ttl_secs, off by default).',
    ),
})

export type DynamoStrategyParameters = z.output<typeof DynamoParameters>

/** A worker's projected load for one request, as Dynamo's slot tracker reports it. */
export interface DynamoWorkerLoad {
  /** Uncached prompt tokens of the requests routed there whose prefill has not finished. */
  activePrefillTokens: number
  /** Distinct prompt blocks of the requests in flight there. */
  activeBlocks: number
  /** This request's blocks not already active there. */
  newBlocks: number
}

export interface DynamoCost {
  prefillBlocks: number
  decodeBlocks: number
  cost: number
}

/**
 * Dynamo's worker cost in blocks (DYN `lib/kv-router/src/scheduling/selector/{mod,default}.rs`,
 * `docs/components/router/router-concepts.md`), device and host tiers (no disk tier here):
 *
 *   raw_prefill  = (active_prefill_tokens + uncached + cached) / block_size
 *   prefill      = max(raw_prefill − overlap_score_credit × overlap_blocks
 *                      − host_cache_hit_weight × host_blocks, 0)
 *   decode       = active_blocks + new_blocks
 *   default:  cost = prefill_load_scale × prefill + decode
 *   lmetric:  cost = prefill × (decode + 1)
 *
 * with cached = overlap_blocks × block_size and uncached = max(prompt − cached, 0), Dynamo's
 * `effective_prefill_tokens`. Blocks are fractional, as Dynamo divides its token counts. A
 * scale would multiply every lmetric cost alike, so Dynamo's formula has none.
 */
export function dynamoCost(
  request: RoutingRequest,
  overlapBlocks: number,
  load: DynamoWorkerLoad,
  parameters: DynamoStrategyParameters,
  hostBlocks = 0,
): DynamoCost {
  const cached = overlapBlocks * request.blockSize
  const uncached = Math.max(request.promptTokens - cached, 0)
  const rawPrefill = (load.activePrefillTokens + uncached + cached) / request.blockSize
  let credit = parameters.overlapScoreCredit * overlapBlocks
  if (hostBlocks > 0) credit += parameters.hostCacheHitWeight * hostBlocks
  const prefillBlocks = Math.max(rawPrefill - credit, 0)
  const decodeBlocks = load.activeBlocks + load.newBlocks
  const cost =
    parameters.selectionPolicy === 'lmetric'
      ? prefillBlocks * (decodeBlocks + 1)
      : parameters.prefillLoadScale * prefillBlocks + decodeBlocks
  return { prefillBlocks, decodeBlocks, cost }
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

function terms(cost: DynamoCost, parameters: DynamoStrategyParameters): string {
  const prefill = cost.prefillBlocks.toFixed(1)
  const decode = cost.decodeBlocks.toFixed(1)
  return parameters.selectionPolicy === 'lmetric'
    ? `prefill ${prefill} × (decode ${decode} + 1)`
    : `${parameters.prefillLoadScale} × prefill ${prefill} + decode ${decode}`
}

/** Uncached tokens a request is charged on the pod it went to, until its first token. */
function prefillTokensOn(request: RoutingRequest, pod: PodCandidate): number {
  return Math.max(request.promptTokens - pod.cachedBlocks * request.blockSize, 0)
}

/**
 * NVIDIA Dynamo's KV router. Its load is its own (`router_track_active_blocks`, on by default),
 * kept here as Dynamo's `ActiveSequences`: a request adds its prompt blocks to its worker when
 * routed, counted once however many requests share them, and its uncached tokens to the
 * worker's prefill load until its first token; both leave when it finishes or fails. The lowest
 * cost wins, exact ties at random; a `temperature` above 0 samples with softmax instead. Its
 * overlap is what KV events stored, as deployed: the pool writes speculative entries for it
 * only with `speculativeEntries` (Dynamo's predicted-TTL index, off by default).
 */
export function createDynamoStrategy(
  parameters: DynamoStrategyParameters = DynamoParameters.parse({}),
): RoutingStrategy {
  const sequences = createActiveSequences()
  return {
    name: 'dynamo',
    speculativeEntries: parameters.speculativeEntries,
    choose(request, candidates, context) {
      if (candidates.length === 0) return noCandidateDecision('dynamo')
      const blocks = blockIdsOf(request.blockKeys)
      const costs = candidates.map((pod) => {
        const active = sequences.load(pod.name)
        const load = {
          activePrefillTokens: active.activePrefillTokens,
          activeBlocks: active.activeBlocks,
          newBlocks: sequences.newBlocks(pod.name, blocks),
        }
        const host = pod.tierBlocks?.[cpuMedium] ?? 0
        return dynamoCost(request, pod.cachedBlocks, load, parameters, host)
      })
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
      const policy = parameters.selectionPolicy === 'lmetric' ? ' (lmetric)' : ''
      return {
        pod: chosen.name,
        reason:
          `dynamo${policy}: ${chosen.name} ${how}, ${cost.cost.toFixed(1)} ` +
          `(${terms(cost, parameters)} blocks)` +
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
    onRouted(request, pod, _context, candidate) {
      sequences.add(
        request.id,
        pod,
        blockIdsOf(request.blockKeys),
        prefillTokensOn(request, candidate),
      )
    },
    onFirstToken(id) {
      sequences.prefillDone(id)
    },
    onReleased(id) {
      sequences.free(id)
    },
    onPodRemoved(pod) {
      sequences.removePod(pod)
    },
  }
}

/** dynamo as a routing-strategy plugin (registered in strategy-registry.ts). */
export const dynamoStrategy = defineStrategy({
  name: 'dynamo',
  description: 'NVIDIA Dynamo block cost.',
  parameters: { block: 'dynamo', schema: DynamoParameters },
  variants: {
    'dynamo-lmetric': { selectionPolicy: 'lmetric' },
    'dynamo-speculative': { speculativeEntries: true },
  },
  create: (parameters) => createDynamoStrategy(parameters),
})
