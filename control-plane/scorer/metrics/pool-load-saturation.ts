import type { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import type { PodReport } from '../../../shared/routing/pool-router.ts'

/**
 * The pool's saturation between requests, for autoscalers (kinference_scorer_pool_saturation):
 * the router's own (poolSaturation, shared/routing/pool-saturation.ts) without a request's
 * predicted TTFT. Each pod's is the larger of its queue over queueDepthThreshold and its KV
 * use over kvCacheUtilThreshold (0 before its first metrics); the pool's is its least
 * saturated pod's among the healthy ones (all, when none is), since the router can still
 * send a request there. 0 idle, 1 when every pod is at a limit (the edge bursts), above 1
 * past them; 1 with no pod at all, so that an autoscaler scales a pool up from zero.
 */
export function poolLoadSaturation(spec: InferencePoolSpec, pods: readonly PodReport[]): number {
  const healthy = pods.filter((pod) => pod.healthy)
  const candidates = healthy.length > 0 ? healthy : pods
  if (candidates.length === 0) return 1
  const { queueDepthThreshold, kvCacheUtilThreshold } = spec.saturation
  let least = Number.POSITIVE_INFINITY
  for (const { metrics } of candidates) {
    const own =
      metrics === null
        ? 0
        : Math.max(
            metrics.waiting / queueDepthThreshold,
            metrics.kvCacheUsage / kvCacheUtilThreshold,
          )
    least = Math.min(least, own)
  }
  return least
}
