import { KinfError } from '../shared/errors/kinf-error.ts'
import type { QuotaAdmission, QuotaLimits, QuotaStore } from '../shared/quota/quota-store.ts'

/**
 * The quota store's answer, or, when the store itself fails (Redis or the Durable Object
 * unreachable), a 503 that says so in the client's terms with a Retry-After: the store's
 * own error (a client library's internals) goes to the log only.
 */
export async function admitQuota(
  deps: { quotas: QuotaStore; nowMs: () => number; log: (line: string) => void },
  account: string,
  limits: QuotaLimits,
  estimatedTokens: number,
): Promise<QuotaAdmission> {
  try {
    return await deps.quotas.admit(account, limits, estimatedTokens, deps.nowMs())
  } catch (error) {
    if (KinfError.isInstance(error) && error.code === 'invalid_request') throw error
    deps.log(`quota admission failed for ${account}: ${(error as Error).message}`)
    throw new KinfError(
      'upstream_unavailable',
      'Quotas cannot be checked right now, so the request was not served; retry shortly.',
      { retryAfterSeconds: 1, cause: error },
    )
  }
}
