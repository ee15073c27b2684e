import type { z } from 'zod'
import { LlmdStickyParameters } from '../../crd/routing-strategy.ts'
import type { PodCandidate, RoutingRequest, RoutingStrategy } from '../routing-strategy.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'
import { pickMaxScore } from './pick-max-score.ts'

export type LlmdStickyStrategyParameters = z.output<typeof LlmdStickyParameters>

/** token-load-scorer's `queueThresholdTokens` default: 128 requests of 32K tokens. */
export const QUEUE_THRESHOLD_TOKENS = 4_194_304

interface PodView {
  hit: number
  /** Uncached in-flight prefill plus this request's uncached tokens on the pod. */
  lookahead: number
  /** lookahead ÷ the pod's peak prefill throughput. */
  ttftMs: number
}

function viewOf(request: RoutingRequest, pod: PodCandidate): PodView {
  const cached = Math.min(pod.cachedBlocks * request.blockSize, request.promptTokens)
  // prompt × (1 − hit), computed from integers so the τ comparison is exact.
  const lookahead = pod.load.pendingPrefillTokens + (request.promptTokens - cached)
  return {
    hit: request.promptTokens > 0 ? cached / request.promptTokens : 0,
    lookahead,
    ttftMs: lookahead * pod.ttft.msPerToken,
  }
}

interface Gate {
  kept: boolean[]
  why: string
}

function percent(value: number): string {
  return `${Math.round(value * 100)}%`
}

/** llm-d's `prefix-cache-affinity-filter`, in its throughput mode. */
function affinityGate(
  views: readonly PodView[],
  candidates: readonly PodCandidate[],
  parameters: LlmdStickyStrategyParameters,
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
  const fastest = (indexes: number[]) =>
    indexes.reduce((best, i) => ((views[i]?.ttftMs ?? 0) < (views[best]?.ttftMs ?? 0) ? i : best))
  if (parameters.maxTtftPenaltyMs > 0 && coldIndexes.length > 0) {
    const bestSticky = fastest(stickyIndexes)
    const bestCold = fastest(coldIndexes)
    const stickyView = views[bestSticky] as PodView
    const coldView = views[bestCold] as PodView
    const msPerToken = candidates[bestSticky]?.ttft.msPerToken ?? 0
    const tau = msPerToken > 0 ? Math.round(parameters.maxTtftPenaltyMs / msPerToken) : Infinity
    const gap =
      `${candidates[bestSticky]?.name} ${Math.round(stickyView.lookahead)} tokens ahead ` +
      `(${Math.round(stickyView.ttftMs)} ms) vs ${candidates[bestCold]?.name} ` +
      `${Math.round(coldView.lookahead)} (${Math.round(coldView.ttftMs)} ms)`
    if (stickyView.ttftMs - coldView.ttftMs > parameters.maxTtftPenaltyMs) {
      return {
        kept: all,
        why: `stickiness broken: ${gap}, more than ${parameters.maxTtftPenaltyMs} ms (τ ≈ ${tau} tokens)`,
      }
    }
    return {
      kept: sticky,
      why: `sticky: ${gap}, within ${parameters.maxTtftPenaltyMs} ms (τ ≈ ${tau} tokens)`,
    }
  }
  return {
    kept: sticky,
    why: `sticky: ${stickyIndexes.length} pod(s) hold ≥ ${percent(parameters.affinityThreshold)}`,
  }
}

/**
 * llm-d's "sticky-until-saturated" profile (LDW `blog/2026-08-17_sticky-until-saturated-token-
 * aware-routing.mdx`; LDR `P/scheduling/filter/prefixcacheaffinity/plugin.go`,
 * `P/scheduling/scorer/tokenload/token_load.go`):
 *
 * 1. prefix-cache-affinity-filter: a pod is sticky when its precise hit ratio
 *    `cachedBlocks·blockSize / promptTokens` ≥ `affinityThreshold`; with probability
 *    `explorationProbability` the gate is skipped; with no sticky pod every pod stays. The
 *    gate breaks (every pod stays) when the best sticky pod's predicted TTFT exceeds the best
 *    cold pod's by more than `maxTtftPenaltyMs`. llm-d predicts TTFT as lookahead tokens ÷
 *    `peakPrefillThroughput`, so the gate is a token gap τ = peakPrefillThroughput ×
 *    maxTTFTPenaltyMs. The peak throughput here is each pod's own, 1/`ttft.msPerToken` tokens
 *    per ms, which equals llm-d's single calibrated constant when the pods are alike; llm-d
 *    adds no fixed overhead, so neither does this.
 * 2. token-load-scorer on the remaining pods: `1 − min(1, lookahead / 4,194,304)`, lookahead =
 *    uncached in-flight tokens (`pendingPrefillTokens`) + prompt × (1 − hit).
 * 3. max-score-picker: highest score, random among ties.
 */
export function createLlmdStickyStrategy(
  parameters: LlmdStickyStrategyParameters = LlmdStickyParameters.parse({}),
): RoutingStrategy {
  return {
    name: 'llmd-sticky',
    choose(request, candidates, context) {
      if (candidates.length === 0) return noCandidateDecision('llmd-sticky')
      const views = candidates.map((pod) => viewOf(request, pod))
      const gate = affinityGate(views, candidates, parameters, context.random)
      const scores = views.map((view, i) =>
        gate.kept[i] ? 1 - Math.min(1, view.lookahead / QUEUE_THRESHOLD_TOKENS) : null,
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
          `${gate.kept.filter(Boolean).length} kept (lookahead ${Math.round(view.lookahead)}, hit ${percent(view.hit)})`,
        scores: candidates.map((pod, i) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: scores[i] ?? null,
        })),
      }
    },
  }
}
