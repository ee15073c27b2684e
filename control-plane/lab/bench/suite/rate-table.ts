import type { ZeroQueueFloor } from '../zero-queue-floor.ts'
import { formatSeconds, formatSpread, type RatePoint } from './rate-points.ts'

/** What bounds a workload's results, whichever router runs (docs/benchmark-bounds.md). */
export interface WorkloadBounds {
  /** TTFT of each request on an idle pod holding everything cacheable. */
  floor: ZeroQueueFloor | null
  /** Hit rate one infinite cache would reach on the request stream. */
  infiniteHitCeiling?: number | null
  /** Hit rate the pool's KV cache can reach offline (Belady, no replication). */
  capacityHitCeiling?: number | null
  /** Hit rate of the pool's KV as one LRU cache (perfect routing, vLLM's eviction): a reference. */
  lruHitReference?: number | null
  /** Requests/s the pool could serve at best (fluid bound). */
  fluidRps?: number | null
}

export const baselineRouter = 'round-robin'
export const ourRouter = 'kinference'

const s = (value: number) => formatSeconds(value)
const pct = (value: number | null | undefined) =>
  value === null || value === undefined || !Number.isFinite(value)
    ? '–'
    : `${(value * 100).toFixed(1)}%`

/** "32x", or "baseline unstable" where the ratio would measure the run's length. */
export function ratioText(baseline: RatePoint, value: number, against: number): string {
  if (!baseline.stability.stable) return 'baseline unstable'
  const ratio = against / value
  if (!Number.isFinite(ratio)) return '–'
  return `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(ratio >= 1 ? 1 : 2)}x`
}

/** One line naming the workload's bounds, for the report. */
export function describeBounds(bounds: WorkloadBounds | undefined): string {
  if (!bounds) return ''
  const parts: string[] = []
  if (bounds.floor)
    parts.push(
      `zero-queue floor median TTFT ${s(bounds.floor.medianMs / 1000)} s, p90 ${s(bounds.floor.p90Ms / 1000)} s`,
    )
  if (bounds.infiniteHitCeiling != null)
    parts.push(`infinite-cache hit ceiling ${pct(bounds.infiniteHitCeiling)}`)
  if (bounds.capacityHitCeiling != null)
    parts.push(`capacity-constrained hit ceiling ${pct(bounds.capacityHitCeiling)}`)
  if (bounds.lruHitReference != null)
    parts.push(`with LRU eviction (perfect routing) ${pct(bounds.lruHitReference)}`)
  if (bounds.fluidRps != null) parts.push(`fluid throughput bound ${s(bounds.fluidRps)} req/s`)
  return parts.length === 0 ? '' : `Bounds: ${parts.join('; ')}.`
}

/**
 * The primary result: every rate × router, medians and p90 over seeds with their spread,
 * served rate, hit rate (and its share of the capacity ceiling), round robin's stability
 * and the TTFT ratio against it where that is meaningful.
 */
export function renderRateTable(
  byRouter: ReadonlyMap<string, readonly RatePoint[]>,
  unit: string,
  bounds: WorkloadBounds | undefined,
): string[] {
  const ceiling = bounds?.capacityHitCeiling ?? null
  const rows = [
    `| ${unit} | router | median TTFT (s) | p90 TTFT (s) | median e2e (s) | served req/s (whole run) | hit rate${ceiling ? ' (of ceiling)' : ''} | TTFT vs round robin |`,
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  const rates = [...new Set([...byRouter.values()].flatMap((points) => points.map((p) => p.rate)))]
  for (const rate of rates.sort((a, b) => a - b)) {
    const rr = byRouter.get(baselineRouter)?.find((p) => p.rate === rate)
    for (const [router, points] of byRouter) {
      const point = points.find((p) => p.rate === rate)
      if (!point) continue
      const hit = pct(point.hitRate.mean)
      const share = ceiling ? ` (${pct(point.hitRate.mean / ceiling)})` : ''
      const vs =
        router === baselineRouter
          ? point.stability.why
          : rr
            ? ratioText(rr, point.ttftMedianS.mean, rr.ttftMedianS.mean)
            : '–'
      rows.push(
        `| ${rate} | ${router} | ${formatSpread(point.ttftMedianS)} | ${formatSpread(point.ttftP90S)} | ${formatSpread(point.e2eMedianS)} | ${point.achievedRps.mean.toFixed(2)} | ${hit}${share} | ${vs} |`,
      )
    }
  }
  return rows
}
