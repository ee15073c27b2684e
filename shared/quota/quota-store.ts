import { z } from 'zod'
import { KinfError } from '../errors/kinf-error.ts'
import type { QuotaBuckets } from './token-bucket.ts'

/** A tenant's limits (InferencePolicy tenant quotas); an absent limit is unlimited. */
export const QuotaLimits = z.strictObject({
  requestsPerMinute: z.int().positive().optional(),
  tokensPerMinute: z.int().positive().optional(),
})
export type QuotaLimits = z.infer<typeof QuotaLimits>

/** Limits from across a boundary (RPC, a script's caller), or a clear invalid_request error. */
export function parseQuotaLimits(limits: unknown): QuotaLimits {
  const parsed = QuotaLimits.safeParse(limits)
  if (parsed.success) return parsed.data
  throw new KinfError('invalid_request', `quota limits: ${z.prettifyError(parsed.error)}`)
}

export type QuotaAdmission = (
  | { admitted: true; reservation: string }
  | { admitted: false; retryAfterSeconds: number; limit: 'requests' | 'tokens'; message: string }
) & {
  /**
   * The account's buckets right after this admission, from a store that has them at hand
   * (the Durable Object's): the x-ratelimit-* headers then need no second read.
   */
  state?: QuotaBuckets
}

/**
 * The per-tenant quota ledger the edge talks to: admit on an estimate (prompt + max_tokens)
 * before a request goes upstream, settle with the usage once it is known. Implementations
 * keep the same semantics (see quota-ledger.ts): in memory, in Redis, in a Durable Object.
 */
export interface QuotaStore {
  admit(
    tenant: string,
    limits: QuotaLimits,
    estimatedTokens: number,
    nowMs: number,
  ): Promise<QuotaAdmission>
  settle(
    tenant: string,
    limits: QuotaLimits,
    reservation: string,
    estimatedTokens: number,
    actualTokens: number,
    nowMs: number,
  ): Promise<void>
}
