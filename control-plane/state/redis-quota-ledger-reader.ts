import type { Redis } from 'ioredis'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { quotaBucketFields, quotaKeys } from '../../shared/protocol/quota-keys.ts'
import type { QuotaBuckets, TokenBucket } from '../../shared/quota/token-bucket.ts'
import type { QuotaLedgerReader } from '../../shared/state/quota-ledger-reader.ts'

/** The Redis quota store's buckets (redis-quota-store.ts), read in one pipeline. */
export function createRedisQuotaLedgerReader(redis: Redis, prefix: string): QuotaLedgerReader {
  return {
    async buckets(accounts) {
      if (accounts.length === 0) return []
      const pipeline = redis.pipeline()
      const keys = quotaKeys(prefix)
      const { requestsLevel, requestsUpdated, tokensLevel, tokensUpdated } = quotaBucketFields
      for (const account of accounts)
        pipeline.hmget(
          keys.buckets(account),
          requestsLevel,
          requestsUpdated,
          tokensLevel,
          tokensUpdated,
        )
      let results: [Error | null, unknown][] | null
      try {
        results = await pipeline.exec()
      } catch (error) {
        throw new KinfError('upstream_unavailable', `reading quotas: ${(error as Error).message}`, {
          cause: error,
        })
      }
      return accounts.map((_, i) => bucketsOf((results?.[i]?.[1] ?? []) as (string | null)[]))
    },
  }
}

function bucketsOf([rl, ru, tl, tu]: (string | null)[]): QuotaBuckets | null {
  const bucket = (level: string | null | undefined, updated: string | null | undefined) =>
    level == null || updated == null
      ? undefined
      : ({ level: Number(level), updatedMs: Number(updated) } satisfies TokenBucket)
  const requests = bucket(rl, ru)
  const tokens = bucket(tl, tu)
  if (requests === undefined && tokens === undefined) return null
  return { ...(requests ? { requests } : {}), ...(tokens ? { tokens } : {}) }
}
