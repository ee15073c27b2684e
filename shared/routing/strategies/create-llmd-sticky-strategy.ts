import { z } from 'zod'
import type { PodCandidate, RoutingRequest, RoutingStrategy } from '../routing-strategy.ts'
import { cpuMedium } from '../ttft-model.ts'
import {
  type ApproximateMatch,
  createApproximatePrefixProducer,
} from './create-approximate-prefix-producer.ts'
import { defineStrategy } from './define-strategy.ts'
import { fraction } from './fraction.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'
import { pickMaxScore } from './pick-max-score.ts'

/** A pool’s `routing.llmdSticky` block, with llm-d’s published defaults. */
export const LlmdStickyParameters = z.strictObject({
  prefixProducer: z
    .enum(['approximate', 'precise'])
    .default('approximate')
    .describe(
      'Where the hit ratio comes from. approximate: the approximate prefix producer the sticky-until-saturated guide ships, character blocks learnt from this router’s own decisions, one LRU per pod sized from its num_gpu_blocks. precise: the KV index built from the pods’ KV events (llm-d precise-prefix-cache producer).',
    ),
  speculativeIndexing: z
    .boolean()
    .default(false)
    .describe(
      'Count a routed request’s blocks as cached on its pod before its KV events arrive, for the pool’s kinference speculativeTtlMs (llm-d precise-prefix-cache producer speculativeIndexing, off by default).',
    ),
  affinityThreshold: fraction
    .default(0.8)
    .describe(
      'Prefix match ratio at or above which a pod is sticky (llm-d prefix-cache-affinity-filter default).',
    ),
  explorationProbability: fraction
    .default(0)
    .describe(
      'Probability of ignoring stickiness for one request: 0 in the filter’s current defaults and in every run of the sticky-until-saturated blog (an older filter README said 0.01).',
    ),
  maxTtftPenaltyMs: z
    .number()
    .min(0)
    .default(18_000)
    .describe(
      'T_max: stickiness breaks when the best sticky pod’s queued uncached prefill, in time at the peak prefill throughput, exceeds the best cold pod’s by more than this; 0 never breaks it. 18,000 is the filter’s shipped default (llm-d prefix-cache-affinity-filter), τ = peak throughput × T_max in tokens.',
    ),
  peakPrefillTokensPerSecond: z
    .number()
    .positive()
    .optional()
    .describe(
      'R_peak of the release gate, tokens/s. Default: calibrated from the pool’s GPU profile as llm-d’s calibrate.sh measures it, one full chunk of max_num_batched_tokens over its prefill time (the filter’s own 15,928 is Qwen3-32B on 2× H100 and is to be re-measured per model and accelerator).',
    ),
  cpuTierWeight: fraction
    .default(0.8)
    .describe(
      'precise producer: weight of a block held in the pod’s CPU tier continuing its GPU hit, against 1 for a GPU block, in the longest consecutive prefix (llm-d precise prefix scorer media weights gpu 1.0, cpu 0.8).',
    ),
  addEstimatedOutputTokens: z
    .boolean()
    .default(false)
    .describe(
      'Also count an output estimate in a pod’s tokens in flight until the request ends (llm-d in-flight-load-producer addEstimatedOutputTokens, off by default).',
    ),
  outputRatio: z
    .number()
    .min(0)
    .default(1.5)
    .describe(
      'Estimated output per prompt token when addEstimatedOutputTokens is on, capped by the request’s max_tokens (llm-d in-flight-load-producer outputRatio).',
    ),
})

export type LlmdStickyStrategyParameters = z.output<typeof LlmdStickyParameters>

/** What llm-d calibrates once per (model, accelerator) instead of predicting. */
export interface LlmdCalibration {
  /** R_peak: one full chunk of max_num_batched_tokens over its prefill time, tokens/s. */
  peakPrefillTokensPerSecond: number
}

/**
 * The filter's shipped `peakPrefillThroughput` (Qwen3-32B on 2× H100, TP 2), for a pool without
 * a GPU profile to calibrate from; its README says to re-measure it per model and accelerator.
 */
export const SHIPPED_PEAK_PREFILL_TOKENS_PER_SECOND = 15_928

/** token-load-scorer's `queueThresholdTokens` default: 128 requests of 32K tokens. */
export const QUEUE_THRESHOLD_TOKENS = 4_194_304

/** One candidate pod as the gate and the token-load scorer see it, for this request. */
interface StickyPodLoad {
  hit: number
  /** The pod's tokens in flight: uncached prompt until the first token, plus output estimates. */
  inFlight: number
  /** This request's tokens there: its uncached prompt, plus its output estimate. */
  own: number
  /** The release gate's TTFT estimate: tokens in flight at the peak prefill throughput. */
  ttftMs: number
}

interface Gate {
  kept: boolean[]
  why: string
}

function percent(value: number): string {
  return `${Math.round(value * 100)}%`
}

/** llm-d's `prefix-cache-affinity-filter` with its default TTFT source, `prefillThroughput`. */
function affinityGate(
  views: readonly StickyPodLoad[],
  candidates: readonly PodCandidate[],
  parameters: LlmdStickyStrategyParameters,
  tau: number,
  random: () => number,
): Gate {
  const all = views.map(() => true)
  if (views.length <= 1 || parameters.affinityThreshold <= 0) return { kept: all, why: 'no gate' }
  if (random() < parameters.explorationProbability) {
    return { kept: all, why: `exploring (p ${parameters.explorationProbability})` }
  }
  const sticky = views.map((view) => view.hit >= parameters.affinityThreshold)
  const stickyIndexes = sticky.flatMap((isSticky, i) => (isSticky ? [i] : []))
  const coldIndexes = sticky.flatMap((isSticky, i) => (isSticky ? [] : [i]))
  if (stickyIndexes.length === 0) {
    const bestHit = Math.max(...views.map((view) => view.hit))
    return {
      kept: all,
      why: `no sticky pod (best hit ${percent(bestHit)} < ${percent(parameters.affinityThreshold)})`,
    }
  }
  if (parameters.maxTtftPenaltyMs > 0 && coldIndexes.length > 0) {
    const fastest = (indexes: number[]) =>
      indexes.reduce((best, i) =>
        (views[i] as StickyPodLoad).ttftMs < (views[best] as StickyPodLoad).ttftMs ? i : best,
      )
    const bestSticky = fastest(stickyIndexes)
    const bestCold = fastest(coldIndexes)
    const stickyView = views[bestSticky] as StickyPodLoad
    const coldView = views[bestCold] as StickyPodLoad
    const gap =
      `${candidates[bestSticky]?.name} ${Math.round(stickyView.inFlight)} tokens in flight ` +
      `(${Math.round(stickyView.ttftMs)} ms) vs ${candidates[bestCold]?.name} ` +
      `${Math.round(coldView.inFlight)} (${Math.round(coldView.ttftMs)} ms)`
    const limit = `${parameters.maxTtftPenaltyMs} ms (τ ${Math.round(tau)} tokens)`
    if (stickyView.ttftMs - coldView.ttftMs > parameters.maxTtftPenaltyMs) {
      return { kept: all, why: `stickiness broken: ${gap}, more than ${limit}` }
    }
    return { kept: sticky, why: `sticky: ${gap}, within ${limit}` }
  }
  return {
    kept: sticky,
    why: `sticky: ${stickyIndexes.length} pod(s) hold ≥ ${percent(parameters.affinityThreshold)}`,
  }
}

/**
 * The prompt tokens the pod holds as the producer sees them: the approximate producer's
 * matched share of the prompt's character blocks (llm-d's hit ratio, matchLength ÷
 * totalBlocks), or the precise index's cached blocks.
 */
function cachedTokens(
  request: RoutingRequest,
  pod: PodCandidate,
  approximate: ApproximateMatch | null,
  cpuTierWeight: number,
): number {
  if (approximate === null) {
    const cpu = pod.tierBlocks?.[cpuMedium] ?? 0
    const blocks = cpu > 0 ? pod.cachedBlocks + cpuTierWeight * cpu : pod.cachedBlocks
    return Math.min(blocks * request.blockSize, request.promptTokens)
  }
  if (approximate.blocks === 0) return 0
  const matched = approximate.matched.get(pod.name) ?? 0
  return (request.promptTokens * matched) / approximate.blocks
}

/** llm-d's output estimate: round(prompt × outputRatio), capped by the request's max_tokens. */
function estimatedOutput(
  request: RoutingRequest,
  parameters: LlmdStickyStrategyParameters,
): number {
  if (!parameters.addEstimatedOutputTokens) return 0
  return Math.min(Math.round(request.promptTokens * parameters.outputRatio), request.maxTokens)
}

/**
 * llm-d's "sticky-until-saturated" default (LDW `blog/2026-08-17_bottleneck-aware-scheduling-
 * for-llm-inference.mdx`; LDR `P/scheduling/filter/prefixcacheaffinity/plugin.go`,
 * `P/scheduling/scorer/tokenload/token_load.go`, `P/requestcontrol/dataproducer/inflightload/`):
 *
 * 1. prefix-cache-affinity-filter: a pod is sticky when its hit ratio ≥ `affinityThreshold`:
 *    by default the approximate producer's matched ÷ total character blocks, as the guide
 *    ships it (`prefixProducer` precise: `cachedBlocks·blockSize / promptTokens` from the KV
 *    index, with speculative entries only under `speculativeIndexing`); with probability
 *    `explorationProbability` the gate is skipped; with no sticky pod every pod stays. Each
 *    pod's TTFT is its tokens in flight ÷ R_peak, a calibrated constant, and the gate breaks
 *    (every pod stays) when the best sticky pod's exceeds the best cold pod's by more than
 *    `maxTtftPenaltyMs`: a gap in queued prefill of τ = R_peak × T_max tokens.
 * 2. token-load-scorer on the remaining pods: `1 − min(1, lookahead / 4,194,304)`, lookahead =
 *    tokens in flight + this request's uncached tokens (prompt × (1 − hit)).
 * 3. max-score-picker: highest score, random among ties.
 *
 * With the precise producer, blocks the pod's CPU tier holds past its GPU hit add
 * `cpuTierWeight` each to the prefix (llm-d's per-medium weights of the precise scorer).
 *
 * Tokens in flight are the uncached prompt tokens sent to the pod and not yet answered by a
 * first token (the router's `pendingPrefillTokens`, which is what llm-d's in-flight load producer
 * holds by default). With `addEstimatedOutputTokens` an output estimate per request is added,
 * held until the request ends, as the producer does.
 */
export function createLlmdStickyStrategy(
  parameters: LlmdStickyStrategyParameters = LlmdStickyParameters.parse({}),
  calibration: LlmdCalibration = {
    peakPrefillTokensPerSecond: SHIPPED_PEAK_PREFILL_TOKENS_PER_SECOND,
  },
): RoutingStrategy {
  const tokensPerMs = calibration.peakPrefillTokensPerSecond / 1000
  const tau = tokensPerMs * parameters.maxTtftPenaltyMs
  // Output estimates held per pod until their requests end (addEstimatedOutputTokens).
  const outputByRequest = new Map<string, { pod: string; tokens: number }>()
  const outputByPod = new Map<string, number>()
  const producer =
    parameters.prefixProducer === 'approximate' ? createApproximatePrefixProducer() : null

  function viewOf(
    request: RoutingRequest,
    pod: PodCandidate,
    approximate: ApproximateMatch | null,
  ): StickyPodLoad {
    const cached = cachedTokens(request, pod, approximate, parameters.cpuTierWeight)
    const inFlight = pod.load.pendingPrefillTokens + (outputByPod.get(pod.name) ?? 0)
    return {
      hit: request.promptTokens > 0 ? cached / request.promptTokens : 0,
      inFlight,
      // prompt × (1 − hit), from integers so comparisons stay exact.
      own: request.promptTokens - cached + estimatedOutput(request, parameters),
      ttftMs: inFlight / tokensPerMs,
    }
  }

  function release(id: string): void {
    const held = outputByRequest.get(id)
    if (!held) return
    outputByRequest.delete(id)
    outputByPod.set(held.pod, (outputByPod.get(held.pod) ?? 0) - held.tokens)
  }

  return {
    name: 'llmd-sticky',
    usesPromptText: producer !== null,
    speculativeEntries: parameters.speculativeIndexing,
    choose(request, candidates, context) {
      if (candidates.length === 0) return noCandidateDecision('llmd-sticky')
      const approximate = producer?.match(request) ?? null
      const views = candidates.map((pod) => viewOf(request, pod, approximate))
      const gate = affinityGate(views, candidates, parameters, tau, context.random)
      const lookahead = views.map((view) => view.inFlight + view.own)
      const scores = lookahead.map((tokens, i) =>
        gate.kept[i] ? 1 - Math.min(1, tokens / QUEUE_THRESHOLD_TOKENS) : null,
      )
      const best = pickMaxScore(
        scores.map((score) => score ?? -Infinity),
        context.random,
      )
      const chosen = candidates[best]
      const view = views[best]
      if (chosen === undefined || view === undefined) return noCandidateDecision('llmd-sticky')
      return {
        pod: chosen.name,
        reason:
          `llmd-sticky: ${gate.why}; ${chosen.name} has the least token load of the ` +
          `${gate.kept.filter(Boolean).length} kept (lookahead ${Math.round(lookahead[best] ?? 0)}, hit ${percent(view.hit)})`,
        scores: candidates.map((pod, i) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: scores[i] ?? null,
        })),
      }
    },
    onRouted(request, pod, _context, candidate) {
      producer?.routed(request, candidate)
      const tokens = estimatedOutput(request, parameters)
      if (tokens === 0) return
      release(request.id)
      outputByRequest.set(request.id, { pod, tokens })
      outputByPod.set(pod, (outputByPod.get(pod) ?? 0) + tokens)
    },
    onReleased: release,
    onPodRemoved(pod) {
      producer?.removePod(pod)
      outputByPod.delete(pod)
      for (const [id, held] of outputByRequest) if (held.pod === pod) outputByRequest.delete(id)
    },
  }
}

/** llmd-sticky as a routing-strategy plugin (registered in strategy-registry.ts). */
export const llmdStickyStrategy = defineStrategy({
  name: 'llmd-sticky',
  description: 'llm-d sticky-until-saturated.',
  parameters: { block: 'llmdSticky', schema: LlmdStickyParameters },
  variants: {
    'llmd-sticky-precise': { prefixProducer: 'precise', speculativeIndexing: true },
  },
  create: (parameters, pool) =>
    createLlmdStickyStrategy(parameters, {
      peakPrefillTokensPerSecond:
        parameters.peakPrefillTokensPerSecond ?? pool.peakPrefillTokensPerSecond,
    }),
})
