import { z } from 'zod'

/** A tenant's limits (InferencePolicy tenant quotas); an absent limit is unlimited. */
export const QuotaLimits = z.strictObject({
  requestsPerMinute: z.int().positive().optional(),
  tokensPerMinute: z.int().positive().optional(),
})
export type QuotaLimits = z.infer<typeof QuotaLimits>

export type QuotaAdmission =
  | { admitted: true; reservation: string }
  | { admitted: false; retryAfterSeconds: number; limit: 'requests' | 'tokens'; message: string }

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
