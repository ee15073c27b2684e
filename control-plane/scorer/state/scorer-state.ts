import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import type { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { dataParallelEndpoints } from '../pools/data-parallel-endpoints.ts'
import type { ScorerBackends, ScorerConfig, ScorerPod, ScorerPool } from '../scorer-config.ts'

/** A pool as the scorer runs it, known by its id. */
export interface StatePool {
  /** namespace/name; the name alone for a pool given without namespace. */
  id: string
  name: string
  namespace: string | null
  spec: InferencePoolSpec
}

/** What the scorer serves: pools, their pods, and the backends that point at them. */
export interface ScorerState {
  /** The snapshot's hash; null for a config given without a snapshot. */
  hash: string | null
  pools: StatePool[]
  /** Every pod once; its `pool` is the id of one of `pools`. */
  pods: ScorerPod[]
  /** Backend name → pool id (when one matches) and model. */
  backends: ScorerBackends
}

/** A state, what makes it unusable, and the hand-given pods left out of it. */
export interface StateOf {
  state: ScorerState
  /** Reasons to refuse the state (a pod listed twice, one of an unknown pool). */
  problems: string[]
  /** Hand-given pods no pool of the state matches: left out. */
  skipped: string[]
}

export function poolIdOf(pool: Pick<ScorerPool, 'name' | 'namespace'>): string {
  return pool.namespace === null ? pool.name : `${pool.namespace}/${pool.name}`
}

/** The snapshot's pools, each with its namespace. */
export function poolsOfSnapshot(snapshot: ConfigSnapshot): ScorerPool[] {
  return Object.values(snapshot.pools).map(({ name, namespace, spec }) => ({
    name,
    namespace,
    spec,
  }))
}

/**
 * GatewayBackend name → the pool (by id: the backend's namespace) and model it targets.
 * Backends that target a provider never reach the scorer, so they are left out.
 */
export function backendsOfSnapshot(snapshot: ConfigSnapshot): ScorerBackends {
  return Object.fromEntries(
    Object.values(snapshot.backends).flatMap((backend) => {
      const target = backend.spec.target.pool
      if (!target) return []
      return [[backend.name, { pool: `${backend.namespace}/${target.name}`, model: target.model }]]
    }),
  )
}

/** The snapshot's endpoints as the scorer's pods: one per engine of a data-parallel pod. */
export function podsOfSnapshot(snapshot: ConfigSnapshot): ScorerPod[] {
  return Object.entries(snapshot.endpoints).flatMap(([pool, endpoints]) =>
    endpoints.flatMap((endpoint) =>
      dataParallelEndpoints(
        {
          name: endpoint.name,
          pool,
          http: endpoint.http,
          metrics: endpoint.metrics,
          events: endpoint.events,
          replay: endpoint.replay,
          dataParallelRank: null,
        },
        endpoint.dataParallelSize ?? 1,
      ),
    ),
  )
}

/**
 * What the scorer serves: the snapshot's pools, backends and endpoints (or, without a
 * snapshot, the pools given by hand), with the hand-given pods and backends of `extras`
 * it does not name (a snapshot's own pod or backend of the same name wins).
 */
export function scorerStateOf(
  snapshot: ConfigSnapshot | null,
  pools: readonly ScorerPool[],
  extras: Pick<ScorerConfig, 'pods' | 'backends'>,
): StateOf {
  if (snapshot === null) return stateOf(null, pools, [], extras.pods, extras.backends)
  if (pools.length > 0)
    throw new KinfError('invalid_config', 'give the scorer a snapshot or pools, not both')
  return stateOf(snapshot.hash, poolsOfSnapshot(snapshot), podsOfSnapshot(snapshot), extras.pods, {
    ...extras.backends,
    ...backendsOfSnapshot(snapshot),
  })
}

function stateOf(
  hash: string | null,
  given: readonly (ScorerPool | StatePool)[],
  listed: readonly ScorerPod[],
  extras: readonly ScorerPod[],
  backends: ScorerBackends,
): StateOf {
  const pools = given.map((pool) => ({ ...pool, id: poolIdOf(pool) }))
  const problems: string[] = []
  const skipped: string[] = []
  const resolved = new Map<string, ScorerPod>()
  for (const pod of listed) {
    const pool = poolRefOf(pod.pool, pools)
    const twice = resolved.get(pod.name)
    if (twice) problems.push(`pod ${pod.name} is listed by pools ${twice.pool} and ${pod.pool}`)
    else if (pool === null) problems.push(`pod ${pod.name} refers to unknown pool "${pod.pool}"`)
    else resolved.set(pod.name, { ...pod, pool })
  }
  for (const pod of extras) {
    // A listed pod (a snapshot's endpoint) of the same name wins over one given by hand.
    if (resolved.has(pod.name)) continue
    const pool = poolRefOf(pod.pool, pools)
    if (pool === null) skipped.push(`pod ${pod.name} refers to unknown pool "${pod.pool}"`)
    else resolved.set(pod.name, { ...pod, pool })
  }
  const backendPools = Object.entries(backends).map(([name, backend]) => [
    name,
    { ...backend, pool: poolRefOf(backend.pool, pools) ?? backend.pool },
  ])
  const state = {
    hash,
    pools,
    pods: [...resolved.values()],
    backends: Object.fromEntries(backendPools),
  }
  return { state, problems, skipped }
}

/** The id of the pool `ref` names: its id, or its name when one pool has that name. */
function poolRefOf(ref: string, pools: readonly StatePool[]): string | null {
  if (pools.some((pool) => pool.id === ref)) return ref
  const named = pools.filter((pool) => pool.name === ref)
  return named.length === 1 ? (named[0]?.id ?? null) : null
}
