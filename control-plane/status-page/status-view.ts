import { z } from 'zod'

/** One pod as the status page shows it: what the scorers last reported of it, merged. */
export const StatusPodView = z.object({
  name: z.string(),
  ready: z.boolean(),
  trust: z.string(),
  drift: z.number().nullable(),
  kvCacheUsage: z.number().nullable(),
  waiting: z.number().nullable(),
  running: z.number().nullable(),
  blocksIndexed: z.number().nullable(),
  /** Share of prompt tokens served from cache, over the decisions in the log; null: none yet. */
  hitRate: z.number().nullable(),
  ttft: z.object({ overheadMs: z.number(), msPerToken: z.number() }).nullable(),
  lastEventAgeMs: z.number().nullable(),
})
export type StatusPodView = z.infer<typeof StatusPodView>

/** A pool condition as the scorers report it (shared/state/pool-state.ts), merged. */
export const PoolConditionView = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionMs: z.number(),
  /** TokenizationAgrees False: one request whose counts differed. */
  example: z
    .object({
      kind: z.enum(['prompt', 'cached']),
      requestId: z.string(),
      model: z.string(),
      pod: z.string(),
      scorer: z.number(),
      reported: z.number(),
    })
    .nullable(),
})
export type PoolConditionView = z.infer<typeof PoolConditionView>

/** One pool as the status page shows it: its conditions and its pods. */
export const StatusPoolView = z.object({
  name: z.string(),
  strategy: z.string().nullable(),
  /** TokenizerReady and TokenizationAgrees; the page shows those that are False. */
  conditions: z.array(PoolConditionView),
  pods: z.array(StatusPodView),
})
export type StatusPoolView = z.infer<typeof StatusPoolView>

export const QuotaBucketView = z.object({
  name: z.string(),
  used: z.number(),
  limit: z.number().nullable(),
})

export const TenantView = z.object({
  tenant: z.string(),
  buckets: z.array(QuotaBucketView),
})
export type TenantView = z.infer<typeof TenantView>

/** What /ui/api/status answers: everything but the decisions, which stream. */
export const StatusView = z.object({
  generatedAtMs: z.number(),
  snapshot: z
    .object({ version: z.number(), hash: z.string(), publishedAtMs: z.number().nullable() })
    .nullable(),
  pools: z.array(StatusPoolView),
  tenants: z.array(TenantView),
})
export type StatusView = z.infer<typeof StatusView>

/** One routing decision, and once the request ended, how it went. */
export const DecisionView = z.object({
  /** The request id the edge (or the scorer) made: unique, whatever clients send. */
  id: z.string(),
  atMs: z.number(),
  tenant: z.string().nullable(),
  rule: z.string().nullable(),
  backend: z.string().nullable(),
  pool: z.string().nullable(),
  pod: z.string().nullable(),
  strategy: z.string().nullable(),
  matchedTokens: z.number().nullable(),
  predictedTtftMs: z.number().nullable(),
  actualTtftMs: z.number().nullable(),
  cachedTokens: z.number().nullable(),
  outputTokens: z.number().nullable(),
  outcome: z.string().nullable(),
})
export type DecisionView = z.infer<typeof DecisionView>
