import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import { refillBucket } from '../quota/quota-ledger.ts'
import type { QuotaLimits } from '../quota/quota-store.ts'
import type { QuotaBuckets, TokenBucket } from '../quota/token-bucket.ts'

/** A ledger account the config gives limits to: a tenant, or a provider's account. */
export interface QuotaAccount {
  /** The ledger's key: the tenant's name, or provider:<namespace>/<name>. */
  account: string
  kind: 'tenant' | 'provider'
  /** The tenant's policy id, or the provider's id. */
  owner: string
  limits: QuotaLimits
}

/** One bucket now: what is available of its capacity (negative: debt). */
export interface BucketNow {
  available: number
  capacity: number
}

export interface QuotaUse extends QuotaAccount {
  requests: BucketNow | null
  tokens: BucketNow | null
  /** Nothing charged yet, or long enough ago that the buckets are full. */
  untouched: boolean
}

/** Every tenant of the snapshot's policies, then every provider with account limits. */
export function quotaAccountsOf(snapshot: ConfigSnapshot): QuotaAccount[] {
  const tenants = Object.entries(snapshot.policies).flatMap(([id, policy]) =>
    policy.spec.tenants.map((tenant) => ({
      account: tenant.name,
      kind: 'tenant' as const,
      owner: id,
      limits: { ...tenant.quotas },
    })),
  )
  const providers = Object.entries(snapshot.providers).flatMap(([id, provider]) => {
    const { requestsPerMinute, tokensPerMinute } = provider.spec.limits ?? {}
    if (requestsPerMinute === undefined && tokensPerMinute === undefined) return []
    const limits: QuotaLimits = {
      ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}),
      ...(tokensPerMinute !== undefined ? { tokensPerMinute } : {}),
    }
    return [{ account: `provider:${id}`, kind: 'provider' as const, owner: id, limits }]
  })
  return [...tenants, ...providers]
}

/** The accounts' buckets refilled to `nowMs`, as the ledger would see them on its next call. */
export function quotaUseOf(
  accounts: readonly QuotaAccount[],
  buckets: readonly (QuotaBuckets | null)[],
  nowMs: number,
): QuotaUse[] {
  return accounts.map((account, i) => {
    const stored = buckets[i] ?? null
    const now = (bucket: TokenBucket | undefined, capacity: number | undefined) =>
      capacity === undefined
        ? null
        : { available: refillBucket(bucket, capacity, nowMs).level, capacity }
    return {
      ...account,
      requests: now(stored?.requests, account.limits.requestsPerMinute),
      tokens: now(stored?.tokens, account.limits.tokensPerMinute),
      untouched: stored === null,
    }
  })
}
