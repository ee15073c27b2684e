import { z } from 'zod'
import type { PodMetricsView, RoutingStrategy } from '../routing-strategy.ts'
import {
  APPROXIMATE_LRU_CAPACITY_PER_SERVER,
  APPROXIMATE_MAX_PREFIX_BLOCKS_TO_MATCH,
} from './create-approximate-prefix-index.ts'
import { createApproximatePrefixProducer } from './create-approximate-prefix-producer.ts'
import { defineStrategy } from './define-strategy.ts'
import { formatRange } from './format-range.ts'
import { noCandidateDecision } from './no-candidate-decision.ts'
import { pickMaxScore } from './pick-max-score.ts'

/** A pool’s `routing.gieDefault` block, with GIE’s published defaults. */
export const GieDefaultParameters = z.strictObject({
  queueWeight: z
    .number()
    .min(0)
    .default(2)
    .describe('Weight of the queue scorer (GIE pkg/epp/config/loader/defaults.go).'),
  kvCacheUtilWeight: z
    .number()
    .min(0)
    .default(2)
    .describe('Weight of the KV-utilisation scorer (GIE pkg/epp/config/loader/defaults.go).'),
  prefixWeight: z
    .number()
    .min(0)
    .default(3)
    .describe('Weight of the approximate prefix scorer (GIE pkg/epp/config/loader/defaults.go).'),
  autoTune: z
    .boolean()
    .default(true)
    .describe(
      'Size each pod’s prefix LRU from its num_gpu_blocks, as GIE’s approximate prefix producer does by default (autoTune, approximateprefix/types.go); lruCapacityPerServer applies to a pod whose capacity is unknown.',
    ),
  lruCapacityPerServer: z
    .int()
    .positive()
    .default(APPROXIMATE_LRU_CAPACITY_PER_SERVER)
    .describe(
      'Blocks remembered per pod by the approximate prefix index when autoTune is off or the pod’s capacity is unknown (GIE default, approximateprefix/types.go).',
    ),
  maxPrefixBlocksToMatch: z
    .int()
    .positive()
    .default(APPROXIMATE_MAX_PREFIX_BLOCKS_TO_MATCH)
    .describe('Longest prefix matched, in blocks (GIE default, approximateprefix/types.go).'),
})

export type GieDefaultStrategyParameters = z.output<typeof GieDefaultParameters>

/**
 * What GIE's datastore holds for a pod it has never scraped: a zero-valued metrics struct,
 * i.e. an empty queue and an empty cache.
 */
const neverScraped: PodMetricsView = { running: 0, waiting: 0, kvCacheUsage: 0, ageMs: Infinity }

/** GIE clamps every scorer's output to [0, 1] before weighting it. */
function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value))
}

/**
 * The GIE endpoint picker's default profile (GIE `pkg/epp/config/loader/defaults.go`):
 * `queue-scorer` ×2 + `kv-cache-utilization-scorer` ×2 + approximate `prefix-cache-scorer` ×3,
 * summed without normalisation (0–7), then `max-score-picker` (shuffle, sort: random ties).
 *
 * - queue: `(maxQ − q)/(maxQ − minQ)` over the candidates' waiting requests, 1 when all equal
 *   (GIE `P/scheduling/scorer/queuedepth/queue.go`).
 * - kv-util: `1 − kvCacheUsage` (GIE `P/scheduling/scorer/kvcacheutilization`).
 * - prefix: matched ÷ total of the prompt's character blocks, a last partial block included
 *   (GIE `P/scheduling/scorer/prefix/plugin.go`), so a one-block prompt scores 1.0 on a 64-byte
 *   match (GIE #2561). Each pod's index holds as many blocks as the pod has KV blocks
 *   (`autoTune`, GIE's default), else `lruCapacityPerServer`.
 *
 * Metrics: the default profile has no staleness filter; GIE's `metrics-staleness-threshold`
 * (2 s) feeds only flow control's saturation detector. Its scorers read whatever the datastore
 * last scraped. A pod whose metrics are null here (missing or stale) is therefore scored on the
 * last metrics this strategy saw for it, or on GIE's zero-valued metrics if it never saw any,
 * which makes a never-scraped pod look idle, as it does in GIE.
 */
export function createGieDefaultStrategy(
  parameters: GieDefaultStrategyParameters = GieDefaultParameters.parse({}),
): RoutingStrategy {
  // GIE's plugin state: its approximate prefix producer, with this pool's knobs.
  const producer = createApproximatePrefixProducer(parameters)
  const lastMetrics = new Map<string, PodMetricsView>()

  return {
    name: 'gie-default',
    usesPromptText: true,
    choose(request, candidates, context) {
      if (candidates.length === 0) return noCandidateDecision('gie-default')
      const { blocks: promptBlocks, matched } = producer.match(request)

      const metrics = candidates.map((pod) => {
        if (pod.metrics === null) return lastMetrics.get(pod.name) ?? neverScraped
        lastMetrics.set(pod.name, pod.metrics)
        return pod.metrics
      })
      const waiting = metrics.map((m) => m.waiting)
      const minQueue = Math.min(...waiting)
      const maxQueue = Math.max(...waiting)
      const parts = candidates.map((pod, i) => {
        const m = metrics[i] as PodMetricsView
        const queue =
          maxQueue === minQueue ? 1 : clamp01((maxQueue - m.waiting) / (maxQueue - minQueue))
        const kvUtil = clamp01(1 - m.kvCacheUsage)
        const blocks = matched.get(pod.name) ?? 0
        const prefix = promptBlocks === 0 ? 0 : clamp01(blocks / promptBlocks)
        const total =
          parameters.queueWeight * queue +
          parameters.kvCacheUtilWeight * kvUtil +
          parameters.prefixWeight * prefix
        return { queue, kvUtil, prefix, blocks, total }
      })

      const best = pickMaxScore(
        parts.map((part) => part.total),
        context.random,
      )
      const chosen = candidates[best]
      const part = parts[best]
      if (chosen === undefined || part === undefined) return noCandidateDecision('gie-default')
      const others = parts.filter((_, i) => i !== best).map((p) => p.total)
      const stale = chosen.metrics === null ? ', metrics stale: last seen' : ''
      const reason =
        `gie-default: ${chosen.name} scored ${part.total.toFixed(2)} (queue ${part.queue.toFixed(2)}, ` +
        `kv-util ${part.kvUtil.toFixed(2)}, prefix ${part.prefix.toFixed(2)} = ${part.blocks}/${promptBlocks} ` +
        `char blocks${stale})` +
        (others.length === 0
          ? ', the only candidate'
          : ` vs ${formatRange(others, 2)} on the others`)
      return {
        pod: chosen.name,
        reason,
        scores: candidates.map((pod, i) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: parts[i]?.total ?? null,
        })),
      }
    },
    onRouted(request, _pod, _context, candidate) {
      producer.routed(request, candidate)
    },
    onPodRemoved(pod) {
      producer.removePod(pod)
      lastMetrics.delete(pod)
    },
  }
}

/** gie-default as a routing-strategy plugin (registered in strategy-registry.ts). */
export const gieDefaultStrategy = defineStrategy({
  name: 'gie-default',
  description:
    'Gateway API Inference Extension default (queue 2, kv-util 2, approximate prefix 3).',
  parameters: { block: 'gieDefault', schema: GieDefaultParameters },
  create: (parameters) => createGieDefaultStrategy(parameters),
})
