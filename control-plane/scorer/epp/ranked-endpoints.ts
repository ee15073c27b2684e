import type { RouteResult } from '../../../shared/routing/pool-router.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import { endpointAddress } from './picked-request.ts'

/** At most this many fallbacks follow the primary: a retry walks them in order. */
const maxFallbacks = 3

/** The pods of `pool` whose endpoints the subset hint allows (all without a hint). */
export function allowedPods(pool: PoolRuntime, subset: readonly string[] | null): Set<string> {
  const pods = pool
    .endpoints()
    .filter((pod) => subset === null || subset.includes(endpointAddress(pod.http)))
  return new Set(pods.map((pod) => pod.name))
}

/**
 * The chosen pod's endpoint first, then the next best by predicted TTFT for the gateway's
 * retries: distinct addresses (a data-parallel pod's engines share one), in the subset.
 */
export function rankedEndpoints(
  pool: PoolRuntime,
  route: RouteResult,
  subset: readonly string[] | null,
): string[] {
  const primary = route.decision.pod as string
  const others = route.candidates
    .map((candidate) => candidate.name)
    .filter((name) => name !== primary)
    .sort(
      (a, b) =>
        (route.predictedTtftMs.get(a) ?? Infinity) - (route.predictedTtftMs.get(b) ?? Infinity),
    )
  const allowed = allowedPods(pool, subset)
  const addresses: string[] = []
  for (const name of [primary, ...others]) {
    const endpoint = pool.endpoint(name)
    if (!endpoint || !allowed.has(name)) continue
    const address = endpointAddress(endpoint.http)
    if (!addresses.includes(address)) addresses.push(address)
    if (addresses.length > maxFallbacks) break
  }
  return addresses
}
