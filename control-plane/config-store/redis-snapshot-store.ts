import { z } from 'zod'
import { canonicalJson } from '../../shared/config/canonical-json.ts'
import { verifySnapshot } from '../../shared/config/compile-snapshot.ts'
import { type ConfigSnapshot, snapshotSchemaOf } from '../../shared/config/config-snapshot.ts'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { PluginsOption } from '../../shared/plugins.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { clientOf, RedisClientOption } from '../redis/redis-client-option.ts'
import { configStoreKeys } from './config-store-keys.ts'
import { publishLua } from './config-store-lua.ts'
import type { PublishedVersion, SnapshotRead } from './published-snapshot.ts'
import {
  checkStoredSnapshot,
  parsePointer,
  readCurrentSnapshot,
  redisUnavailable,
} from './read-current-snapshot.ts'

export const RedisSnapshotStoreOptions = z.strictObject({
  redis: RedisClientOption,
  prefix: z
    .string()
    .default(defaultKeyPrefix)
    .describe('Namespace of every key (config-store-keys.ts)'),
  keep: z
    .int()
    .min(1)
    .max(10_000)
    .default(10)
    .describe('Versions kept for rollback; older snapshots are deleted on publish'),
  plugins: PluginsOption,
})
export type RedisSnapshotStoreOptions = z.infer<typeof RedisSnapshotStoreOptions>
export type RedisSnapshotStoreOptionsInput = z.input<typeof RedisSnapshotStoreOptions>

export interface PublishResult {
  version: number
  /** False when the current snapshot already had this hash: nothing was written. */
  changed: boolean
}

export interface RedisSnapshotStore {
  publish(snapshot: ConfigSnapshot, nowMs: number): Promise<PublishResult>
  /** The current snapshot, verified (or why it is not); null before the first publish. */
  current(): Promise<SnapshotRead | null>
  /** The kept versions, newest first. */
  versions(): Promise<PublishedVersion[]>
  /** A kept version, verified; null when it is not kept (never published, or trimmed). */
  read(version: number): Promise<SnapshotRead | null>
  /**
   * Publishes a kept version's snapshot again, as a new version; unchanged when it is
   * already current. A version no longer kept is KinfError not_found.
   */
  rollback(version: number, nowMs: number): Promise<PublishResult>
  close(): Promise<void>
}

/**
 * Config snapshots in Redis, versioned: what `kinfctl` publishes and what scorer and edge
 * replicas follow (follow-redis-snapshots.ts). Each publish is one script: version,
 * snapshot, pointer, trim and notice together, so a follower never sees half of one.
 */
export async function createRedisSnapshotStore(
  input: RedisSnapshotStoreOptionsInput,
): Promise<RedisSnapshotStore> {
  const options = parseOptions(RedisSnapshotStoreOptions, input, 'redis snapshot store')
  const keys = configStoreKeys(options.prefix)
  const schema = snapshotSchemaOf(options.plugins)
  const { redis, release } = await clientOf(options.redis, 'redis snapshot store')

  async function publish(snapshot: ConfigSnapshot, nowMs: number): Promise<PublishResult> {
    if (!Number.isSafeInteger(nowMs) || nowMs < 0)
      throw new KinfError('invalid_request', 'snapshot store: nowMs must be a whole number of ms')
    const verified = await verifySnapshot(snapshot, schema)
    const args = [keys.prefix, verified.hash, canonicalJson(verified), String(nowMs)]
    let reply: [number, number]
    try {
      reply = (await redis.eval(publishLua, 0, ...args, String(options.keep))) as [number, number]
    } catch (error) {
      throw redisUnavailable('publishing', error)
    }
    return { version: reply[1], changed: reply[0] === 1 }
  }

  async function entryOf(version: number): Promise<PublishedVersion | null> {
    const members = await redis.zrangebyscore(keys.versions, version, version)
    const parsed = members.length > 0 ? parsePointer(members[0] as string) : null
    return parsed?.ok ? parsed.current : null
  }

  async function read(version: number): Promise<SnapshotRead | null> {
    if (!Number.isSafeInteger(version) || version < 1) return null
    try {
      const [entry, text] = await Promise.all([entryOf(version), redis.get(keys.snapshot(version))])
      if (text === null) return null
      // A snapshot without its entry cannot be checked against what was published.
      if (entry === null)
        return {
          ok: false,
          version,
          error: new KinfError('invalid_config', `config version ${version} has no entry`),
        }
      return await checkStoredSnapshot(entry, text, schema)
    } catch (error) {
      throw redisUnavailable(`reading version ${version}`, error)
    }
  }

  async function versions(): Promise<PublishedVersion[]> {
    let members: string[]
    try {
      members = await redis.zrevrange(keys.versions, 0, -1)
    } catch (error) {
      throw redisUnavailable('listing versions', error)
    }
    return members.flatMap((member) => {
      const parsed = parsePointer(member)
      return parsed.ok ? [parsed.current] : []
    })
  }

  return {
    publish,
    read,
    versions,

    async current() {
      const read = await readCurrentSnapshot(redis, keys, 0, schema)
      // With no version known, the snapshot is always read; 'unchanged' cannot come back.
      return read === null || read.ok === 'unchanged' ? null : read
    },

    async rollback(version, nowMs) {
      const stored = await read(version)
      if (stored === null) {
        const kept = (await versions()).map((entry) => entry.version)
        throw new KinfError(
          'not_found',
          `config version ${version} is not kept (kept: ${kept.join(', ') || 'none'})`,
        )
      }
      if (!stored.ok) throw stored.error
      return publish(stored.published.snapshot, nowMs)
    },

    close: release,
  }
}
