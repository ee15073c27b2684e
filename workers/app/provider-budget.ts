import type { SnapshotProvider } from '../../shared/config/config-snapshot.ts'
import type { QuotaAdmission } from '../../shared/quota/quota-store.ts'
import { admitQuota, settleQuota } from './admit-quota.ts'
import type { EdgeDeps } from './edge-deps.ts'

export type ProviderBudget =
  | { admitted: true; settle: (actualTokens: number) => Promise<void> }
  | Extract<QuotaAdmission, { admitted: false }>

/**
 * An InferenceProvider's account limits (requests and tokens per minute), kept in the same
 * quota ledger as the tenants under `provider:<namespace>/<name>`: bursting stops when the
 * account would be throttled, and the request goes to the next attempt instead.
 * maxConcurrentRequests is not counted here (in-flight counts across isolates need a
 * different ledger).
 */
export async function reserveProvider(
  deps: EdgeDeps,
  providerId: string,
  provider: SnapshotProvider,
  estimatedTokens: number,
): Promise<ProviderBudget> {
  const { requestsPerMinute, tokensPerMinute } = provider.spec.limits ?? {}
  const limits = {
    ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}),
    ...(tokensPerMinute !== undefined ? { tokensPerMinute } : {}),
  }
  if (Object.keys(limits).length === 0) return { admitted: true, settle: async () => {} }
  const account = `provider:${providerId}`
  const admission = await admitQuota(deps, account, limits, estimatedTokens)
  if (!admission.admitted) return admission
  let settled = false
  return {
    admitted: true,
    settle: async (actualTokens) => {
      if (settled) return
      settled = true
      await settleQuota(deps, account, limits, admission.reservation, estimatedTokens, actualTokens)
    },
  }
}
