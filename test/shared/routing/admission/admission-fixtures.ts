import type { RouteResult } from '../../../../shared/routing/route-result.ts'
import type { PodCandidate, PodMetricsView } from '../../../../shared/routing/routing-strategy.ts'
import { pod, request } from '../strategies/routing-fixtures.ts'

export { pod, request }

/** The route a gate sees: these candidates, the first chosen (gates read only candidates). */
export function routeOf(candidates: PodCandidate[]): RouteResult {
  const first = candidates[0]?.name ?? null
  return {
    decision: { pod: first, reason: 'fixture', scores: [] },
    predictedTtftMs: new Map(),
    predictedTpotMs: new Map(),
    indexedBlocks: new Map(),
    candidates,
  }
}

/** A pod whose fresh scraped metrics say `waiting` queued and `kvCacheUsage` in use. */
export function scraped(
  name: string,
  waiting: number,
  kvCacheUsage: number,
  ageMs = 10,
): PodCandidate {
  const metrics: PodMetricsView = { running: 4, waiting, kvCacheUsage, ageMs }
  return pod(name, { metrics })
}

/** A constant "random" draw, to put a probabilistic rule exactly on either side of its odds. */
export const draw = (value: number) => () => value
