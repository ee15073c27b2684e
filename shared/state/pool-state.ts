import { z } from 'zod'

const Count = z.int().min(0)

/** One answered request whose counts the scorer and the pod disagreed on. */
export const TokenCountExample = z.strictObject({
  /** prompt: usage.prompt_tokens; cached: usage.prompt_tokens_details.cached_tokens. */
  kind: z.enum(['prompt', 'cached']),
  /** The request's id (the edge's or the scorer's own, never the client's). */
  requestId: z.string().min(1).max(256),
  model: z.string().max(256),
  pod: z.string().min(1),
  /** The scorer's count (prompt) or prediction (cached), and what the pod reported. */
  scorer: Count,
  reported: Count,
  /** Wall time the answer ended. */
  atMs: z.number(),
})
export type TokenCountExample = z.infer<typeof TokenCountExample>

export const conditionStatuses = ['True', 'False', 'Unknown'] as const

/**
 * A pool's condition as one scorer replica sees it: metav1.Condition's fields (its time
 * in wall ms), and for TokenizationAgrees, one request that disagreed.
 */
export const PoolCondition = z.strictObject({
  /** TokenizerReady, TokenizationAgrees. */
  type: z.string().min(1).max(316),
  status: z.enum(conditionStatuses),
  /** CamelCase, as metav1.Condition's. */
  reason: z.string().min(1).max(1024),
  message: z.string().max(32_768),
  /** Wall time the status last changed. */
  lastTransitionMs: z.number(),
  example: TokenCountExample.nullable(),
})
export type PoolCondition = z.infer<typeof PoolCondition>

/** One pool as one replica sees it: its conditions. */
export const PoolStateView = z.strictObject({
  /** The pool's id (namespace/name, or its name for a pool given by hand). */
  pool: z.string().min(1),
  conditions: z.array(PoolCondition).max(16),
})
export type PoolStateView = z.infer<typeof PoolStateView>

/** A condition merged over the replicas: the one shown, and the replicas reporting its status. */
export interface MergedPoolCondition extends PoolCondition {
  replicas: string[]
}

/** One pool with every live replica's conditions merged (mergePoolViews). */
export interface PoolState {
  pool: string
  conditions: MergedPoolCondition[]
}

/** False says something is wrong on some replica; True beats Unknown (no evidence yet). */
const statusRank = { False: 2, True: 1, Unknown: 0 } as const

/**
 * Per pool and condition type, the replicas' views merged: the worst status any replica
 * reports (False, then True, then Unknown), with the latest transition to it, and the
 * replicas that report it. A pool's tokenizer may load on one replica and not another
 * (a volume missing on one node): the pool shows False while any replica routes it on load.
 */
export function mergePoolViews(
  views: readonly { replica: string; pools: readonly PoolStateView[] }[],
): PoolState[] {
  const byPool = new Map<string, Map<string, MergedPoolCondition>>()
  for (const view of views) {
    for (const pool of view.pools) {
      let conditions = byPool.get(pool.pool)
      if (!conditions) {
        conditions = new Map()
        byPool.set(pool.pool, conditions)
      }
      for (const condition of pool.conditions) {
        const known = conditions.get(condition.type)
        conditions.set(condition.type, mergedCondition(known, condition, view.replica))
      }
    }
  }
  return [...byPool.entries()]
    .map(([pool, conditions]) => ({
      pool,
      conditions: [...conditions.values()].sort((a, b) => a.type.localeCompare(b.type)),
    }))
    .sort((a, b) => a.pool.localeCompare(b.pool))
}

function mergedCondition(
  known: MergedPoolCondition | undefined,
  next: PoolCondition,
  replica: string,
): MergedPoolCondition {
  if (!known) return { ...next, replicas: [replica] }
  const rank = statusRank[next.status] - statusRank[known.status]
  if (rank < 0) return known
  if (rank > 0) return { ...next, replicas: [replica] }
  const latest = next.lastTransitionMs > known.lastTransitionMs ? next : known
  return { ...latest, replicas: [...known.replicas, replica] }
}
