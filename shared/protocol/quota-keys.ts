/**
 * Where the quota ledger lives in Redis, written by the Node edge's store
 * (control-plane/edge/redis-quota-store.ts) and read by `kinfctl inspect tenants` and the
 * status page (control-plane/state/redis-quota-ledger-reader.ts). The account sits in a
 * hash tag, so one account's keys share a Redis Cluster slot:
 *
 *   {prefix}quota:{account}           hash    the buckets (quotaBucketFields)
 *   {prefix}quota:{account}:r:{id}    string  one open reservation's estimate, PX ttl
 *
 *   redis-cli HGETALL 'kinf:quota:{acme}'
 */
export interface QuotaKeys {
  buckets(account: string): string
  reservation(account: string, reservation: string): string
}

export function quotaKeys(prefix: string): QuotaKeys {
  const buckets = (account: string) => `${prefix}quota:{${account}}`
  return {
    buckets,
    reservation: (account, reservation) => `${buckets(account)}:r:${reservation}`,
  }
}

/**
 * The fields of an account's buckets hash: each bucket's level and when it was last
 * updated (ms), for requests and for tokens (shared/quota/quota-ledger.ts's TokenBucket).
 */
export const quotaBucketFields = {
  requestsLevel: 'rl',
  requestsUpdated: 'ru',
  tokensLevel: 'tl',
  tokensUpdated: 'tu',
} as const
