import type { Redis } from 'ioredis'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import { configStoreKeys } from '../../config-store/config-store-keys.ts'
import { createRedisSnapshotStore } from '../../config-store/redis-snapshot-store.ts'
import { createRedisKvIndex } from '../../kv-index/redis-kv-index.ts'
import { connectRedis } from '../../redis/connect-redis.ts'
import { createRedisQuotaLedgerReader } from '../../state/redis-quota-ledger-reader.ts'
import { createRedisStateStore } from '../../state/redis-state-store.ts'
import { stateKeys } from '../../state/state-keys.ts'
import { createStateReader, type StateReader } from '../../state/state-reader.ts'

/** What `kinfctl inspect` reads from: one Redis connection under one prefix. */
export interface InspectSession {
  reader: StateReader
  /** The shared KV index, opened on first use (loads its scripts). */
  index(): Promise<KvIndex>
  /** Where, for messages: the URL without credentials, and the prefix. */
  where: string
  close(): Promise<void>
}

/**
 * Connects (upstream_unavailable when Redis cannot be reached) and checks that Kinference
 * wrote something under the prefix (not_found otherwise, naming the prefix).
 */
export async function openInspectSession(url: string, prefix: string): Promise<InspectSession> {
  const where = `redis ${redactedUrl(url)} (prefix "${prefix}")`
  const redis = await connectRedis(url, `redis ${redactedUrl(url)}`)
  try {
    await checkHoldsState(redis, prefix, where)
    const state = await createRedisStateStore({ redis, prefix })
    const snapshots = await createRedisSnapshotStore({ redis, prefix })
    const reader = createStateReader({
      state,
      snapshots,
      quotas: createRedisQuotaLedgerReader(redis, prefix),
      nowMs: Date.now,
    })
    let index: Promise<KvIndex> | null = null
    return {
      reader,
      where,
      index: () => {
        index ??= createRedisKvIndex({ redis, prefix })
        return index
      },
      async close() {
        await redis.quit().catch(() => redis.disconnect())
      },
    }
  } catch (error) {
    redis.disconnect()
    throw error
  }
}

/** Any key the scorer, the config store or the index writes under the prefix. */
async function checkHoldsState(redis: Redis, prefix: string, where: string): Promise<void> {
  const keys = stateKeys(prefix)
  let found: number
  try {
    found = await redis.exists(
      keys.replicas,
      keys.decisions,
      configStoreKeys(prefix).current,
      `${prefix}pods`,
    )
  } catch (error) {
    throw new KinfError('upstream_unavailable', `${where}: ${(error as Error).message}`)
  }
  if (found === 0)
    throw new KinfError(
      'not_found',
      `${where} holds no Kinference state: no scorer, controller or embedded default has written there (another --prefix?)`,
    )
}

function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString().replace(/\/$/, '')
  } catch {
    return url
  }
}
