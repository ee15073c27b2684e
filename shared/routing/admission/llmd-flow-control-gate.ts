import { z } from 'zod'
import type { PodCandidate } from '../routing-strategy.ts'
import { type AdmissionGate, type AdmissionVerdict, admitted } from './admission-gate.ts'

/** llm-d's admission options, defaulting to what llm-d-router ships. */
export const LlmdFlowControlOptions = z.strictObject({
  queueDepthThreshold: z
    .number()
    .positive()
    .default(5)
    .describe(
      'Waiting requests at which a pod scores 1 (utilization-detector queueDepthThreshold).',
    ),
  kvCacheUtilThreshold: z
    .number()
    .gt(0)
    .max(1)
    .default(0.8)
    .describe('KV use at which a pod scores 1 (utilization-detector kvCacheUtilThreshold).'),
  metricsStalenessMs: z
    .number()
    .positive()
    .default(200)
    .describe(
      'Metrics older than this score 1, fail closed (metricsStalenessThreshold; llm-d scrapes every 50 ms).',
    ),
  mode: z
    .enum(['hard', 'probabilistic'])
    .default('hard')
    .describe(
      'hard: the saturation gate every EPP runs (flow control off, the default). probabilistic: the opt-in probabilistic-admitter plugin.',
    ),
  power: z.number().positive().default(5).describe('probabilistic-admitter power.'),
  k: z.number().positive().default(300).describe('probabilistic-admitter k.'),
  priority: z
    .int()
    .default(-1)
    .describe(
      'The requests’ InferenceObjective priority. Below 0 is sheddable, the only kind llm-d refuses; the benchmark’s requests are all sheddable, else neither rule ever sheds.',
    ),
})

export type LlmdFlowControlOptionsInput = z.input<typeof LlmdFlowControlOptions>

export interface LlmdSaturationLimits {
  queue: number
  kv: number
  /** null: metrics are taken at any age (the probabilistic admitter checks only for none). */
  stalenessMs: number | null
}

/**
 * The utilization detector's roofline pool saturation: the mean over pods of
 * max(waiting / queue threshold, KV use / KV threshold), a pod without metrics (or with stale
 * ones) scoring 1. An empty pool is saturated (1). llm-d's utilization-detector README and
 * code; GIE v1.5.0 ships the same detector.
 */
export function llmdSaturation(
  candidates: readonly PodCandidate[],
  limits: LlmdSaturationLimits,
): number {
  if (candidates.length === 0) return 1
  let total = 0
  for (const { metrics } of candidates) {
    const stale =
      limits.stalenessMs !== null && metrics !== null && metrics.ageMs > limits.stalenessMs
    total +=
      metrics === null || stale
        ? 1
        : Math.max(metrics.waiting / limits.queue, metrics.kvCacheUsage / limits.kv)
  }
  return total / candidates.length
}

/**
 * The probabilistic-admitter's shipped EPP config neuters the saturation gate (queue
 * 999,999,999, KV 1.0) so the admitter decides alone; the gate still runs first and still
 * scores stale and missing metrics as 1, so a pool with none fresh is refused by it.
 */
const neuteredGate = { queue: 999_999_999, kv: 1 }

function shed(code: string, message: string): AdmissionVerdict {
  return { kind: 'refuse', status: 429, code, message, retryAfterSeconds: null }
}

/**
 * llm-d's admission of sheddable requests (llm-d-router, the EPP's legacy admission
 * controller and the probabilistic-admitter plugin). Requests of priority 0 and above are
 * always admitted. Both answer ResourceExhausted, which the EPP maps to 429; the admitter's
 * denial passes through the director's admit-plugin path, which at llm-d-router's newest
 * stored commit rewraps it as Internal (500), so a client would see 500 there.
 *
 * - hard: refused when the pool saturation (llmdSaturation) is at least 1. Flow control
 *   (queueing at the EPP) is off by default behind its feature gate; with it on, saturation
 *   holds requests in the EPP instead of refusing them, which a gate cannot model.
 * - probabilistic: refused with probability min(saturation^power × k, 1), saturation as
 *   above but only missing metrics scoring 1 (the admitter checks no age). Defaults power 5
 *   and k 300 shed 9.6% at saturation 0.2 and all from (1/300)^(1/5) ≈ 0.32 (its README
 *   rounds this to 0.34). The admitter would admit
 *   an empty pool, but the neutered gate before it has already refused it.
 */
export function createLlmdFlowControlGate(
  options: LlmdFlowControlOptionsInput = {},
): AdmissionGate {
  const config = LlmdFlowControlOptions.parse(options)
  const thresholds = { queue: config.queueDepthThreshold, kv: config.kvCacheUtilThreshold }
  const gate = {
    ...(config.mode === 'hard' ? thresholds : neuteredGate),
    stalenessMs: config.metricsStalenessMs,
  }
  return {
    name: config.mode === 'hard' ? 'llm-d flow control' : 'llm-d probabilistic admitter',
    admit(route, _request, _nowMs, random) {
      if (config.priority >= 0) return admitted
      const saturation = llmdSaturation(route.candidates, gate)
      if (saturation >= 1)
        return shed(
          'pool_saturated',
          `Pool saturation ${saturation.toFixed(3)} is at least 1: sheddable request dropped (llm-d).`,
        )
      if (config.mode === 'hard') return admitted
      const load = llmdSaturation(route.candidates, { ...thresholds, stalenessMs: null })
      const probability = Math.min(load ** config.power * config.k, 1)
      if (random() >= probability) return admitted
      return shed(
        'probabilistic_shed',
        `Shed at pool saturation ${load.toFixed(3)} with probability ${probability.toFixed(3)} (llm-d probabilistic admitter).`,
      )
    },
  }
}
