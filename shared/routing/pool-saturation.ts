import type { InferencePoolSpec } from '../crd/inference-pool.ts'
import type { RouteResult } from './route-result.ts'

export interface PoolSaturation {
  /**
   * How close the least loaded pod is to the pool's limits: the largest of its queue over
   * queueDepthThreshold, KV use over kvCacheUtilThreshold and predicted TTFT over the SLO.
   * 0 idle, 1 at the limits, above 1 past them.
   */
  saturation: number
  /** Every pod over one of its limits: the edge may burst instead of queueing. */
  saturated: boolean
}

/**
 * A pool is as saturated as its least saturated pod, because the router can still send a
 * request there. Thresholds come from the pool's spec; a pod without metrics yet counts
 * by its predicted TTFT alone.
 */
export function poolSaturation(spec: InferencePoolSpec, route: RouteResult): PoolSaturation {
  const { ttftSloMs, saturation } = spec
  const limit = saturation.predictedTtftMs ?? ttftSloMs
  let least = Number.POSITIVE_INFINITY
  let saturated = route.candidates.length > 0
  for (const pod of route.candidates) {
    const predicted = route.predictedTtftMs.get(pod.name) ?? 0
    const overTtft = limit !== undefined && predicted > limit
    const overLoad =
      pod.metrics !== null &&
      (pod.metrics.waiting >= saturation.queueDepthThreshold ||
        pod.metrics.kvCacheUsage >= saturation.kvCacheUtilThreshold)
    if (!overTtft && !overLoad) saturated = false
    const ratios = [limit !== undefined ? predicted / limit : 0]
    if (pod.metrics !== null)
      ratios.push(
        pod.metrics.waiting / saturation.queueDepthThreshold,
        pod.metrics.kvCacheUsage / saturation.kvCacheUtilThreshold,
      )
    least = Math.min(least, Math.max(...ratios))
  }
  return { saturation: Number.isFinite(least) ? least : 1, saturated }
}
