import { z } from 'zod'

/** Where the edge asks the scorer how its pools would serve a request, before deciding. */
export const poolEstimatePath = '/v1/kinference/estimate'

export const PoolEstimateRequest = z.strictObject({
  kind: z.enum(['chat', 'completion']),
  /** The client's OpenAI body; each target's model replaces its `model`. */
  body: z.looseObject({}),
  targets: z
    .array(z.strictObject({ pool: z.string().min(1), model: z.string().min(1) }))
    .min(1)
    .max(16),
})
export type PoolEstimateRequest = z.infer<typeof PoolEstimateRequest>

export const PoolEstimate = z.strictObject({
  /** 0 idle, 1 at the pool's limits (least loaded pod), above 1 past them. */
  saturation: z.number().min(0),
  saturated: z.boolean(),
  /** The best pod's predicted TTFT for this prompt; null when the pool has no pods. */
  predictedTtftMs: z.number().min(0).nullable(),
  /** Exact prompt length with the pool's tokenizer and chat template. */
  promptTokens: z.int().min(0),
  /** Prompt tokens the chosen pod already holds in its KV cache, per the index. */
  matchedTokens: z.int().min(0),
  pod: z.string().nullable(),
})
export type PoolEstimate = z.infer<typeof PoolEstimate>

/** One result per target, in the request's order. */
export const PoolEstimateResult = z.strictObject({
  pool: z.string(),
  model: z.string(),
  estimate: PoolEstimate.nullable(),
  /** Why there is no estimate: unknown pool, model not served, body unusable. */
  error: z.string().nullable(),
})
export type PoolEstimateResult = z.infer<typeof PoolEstimateResult>

export const PoolEstimateResponse = z.strictObject({ results: z.array(PoolEstimateResult) })
export type PoolEstimateResponse = z.infer<typeof PoolEstimateResponse>
