import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { StateStore } from '../../shared/state/state-store.ts'
import type { SnapshotRead } from '../config-store/published-snapshot.ts'
import { createRedisSnapshotStore } from '../config-store/redis-snapshot-store.ts'
import { connectRedis } from '../redis/connect-redis.ts'
import { createRedisQuotaLedgerReader } from '../state/redis-quota-ledger-reader.ts'
import { createStateReader, type StateReader } from '../state/state-reader.ts'

export interface StatusReader {
  reader: StateReader
  /** The quota ledgers are readable (in Redis); in memory they are the edge's alone. */
  quotasKnown: boolean
  close(): Promise<void>
}

/**
 * What the scorer's status page reads: with Redis, exactly what `kinfctl inspect` reads
 * (the replicas' shared state, the published snapshot, the quota ledgers); without, this
 * replica's own state and the snapshot it applied, and no quotas.
 */
export async function openStatusReader(options: {
  redisUrl: string | null
  redisPrefix: string
  state: StateStore
  /** The snapshot the scorer serves (version 0 below: it was not read from a store). */
  applied: () => ConfigSnapshot | null
}): Promise<StatusReader> {
  if (options.redisUrl === null) {
    const current = async (): Promise<SnapshotRead | null> => {
      const snapshot = options.applied()
      return (
        snapshot && {
          ok: true,
          published: { version: 0, hash: snapshot.hash, publishedAt: 0, snapshot },
        }
      )
    }
    return {
      reader: createStateReader({
        state: options.state,
        snapshots: { current, read: async () => null },
        quotas: { buckets: async (accounts) => accounts.map(() => null) },
        nowMs: Date.now,
      }),
      quotasKnown: false,
      close: async () => {},
    }
  }
  const redis = await connectRedis(options.redisUrl, 'status page')
  const snapshots = await createRedisSnapshotStore({ redis, prefix: options.redisPrefix })
  return {
    reader: createStateReader({
      state: options.state,
      snapshots,
      quotas: createRedisQuotaLedgerReader(redis, options.redisPrefix),
      nowMs: Date.now,
    }),
    quotasKnown: true,
    async close() {
      await snapshots.close()
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
