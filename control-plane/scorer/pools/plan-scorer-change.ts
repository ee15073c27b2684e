import type { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { sameFeedSource } from '../../kv-feeds/pod-feed.ts'
import type { ScorerPod } from '../scorer-config.ts'
import type { ScorerState, StatePool } from '../state/scorer-state.ts'
import { feedSourceOf } from './pool-runtime.ts'

/** What changes from one state to the next, by pool id and pod name. */
export interface ScorerChangePlan {
  pools: {
    added: StatePool[]
    removed: string[]
    /** The spec changed: a new runtime takes new requests, the old one drains. */
    changed: StatePool[]
    kept: string[]
  }
  pods: {
    added: ScorerPod[]
    removed: string[]
    /** Another pool, address, metrics or feed (a new model of its pool included): re-added. */
    changed: ScorerPod[]
  }
}

/** Compares two states (pure). */
export function planScorerChange(from: ScorerState, to: ScorerState): ScorerChangePlan {
  const before = new Map(from.pools.map((pool) => [pool.id, pool]))
  const after = new Map(to.pools.map((pool) => [pool.id, pool]))
  const pools: ScorerChangePlan['pools'] = { added: [], removed: [], changed: [], kept: [] }
  for (const pool of to.pools) {
    const old = before.get(pool.id)
    if (!old) pools.added.push(pool)
    else if (sameJson(old.spec, pool.spec)) pools.kept.push(pool.id)
    else pools.changed.push(pool)
  }
  pools.removed = from.pools.filter((pool) => !after.has(pool.id)).map((pool) => pool.id)

  const podsBefore = new Map(from.pods.map((pod) => [pod.name, pod]))
  const podsAfter = new Set(to.pods.map((pod) => pod.name))
  const pods: ScorerChangePlan['pods'] = { added: [], removed: [], changed: [] }
  const specOf = (byId: Map<string, StatePool>, id: string) => byId.get(id)?.spec
  for (const pod of to.pods) {
    const old = podsBefore.get(pod.name)
    if (!old) pods.added.push(pod)
    else if (!samePod(old, specOf(before, old.pool), pod, specOf(after, pod.pool)))
      pods.changed.push(pod)
  }
  pods.removed = from.pods.filter((pod) => !podsAfter.has(pod.name)).map((pod) => pod.name)
  return { pools, pods }
}

/** True when nothing changes: the same pools, pods and backends. */
export function isEmptyPlan(plan: ScorerChangePlan): boolean {
  const { pools, pods } = plan
  return (
    pools.added.length + pools.removed.length + pools.changed.length === 0 &&
    pods.added.length + pods.removed.length + pods.changed.length === 0
  )
}

function samePod(
  a: ScorerPod,
  aSpec: InferencePoolSpec | undefined,
  b: ScorerPod,
  bSpec: InferencePoolSpec | undefined,
): boolean {
  if (a.pool !== b.pool || a.http !== b.http || a.metrics !== b.metrics) return false
  if (!aSpec || !bSpec) return false
  return sameFeedSource(feedSourceOf(a, aSpec), feedSourceOf(b, bSpec))
}

/** Deep equality of JSON values, whatever the order of their keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  return stableJson(a) === stableJson(b)
}

function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  )
}
