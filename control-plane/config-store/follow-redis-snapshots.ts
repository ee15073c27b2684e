import { Redis } from 'ioredis'
import { z } from 'zod'
import { snapshotSchemaOf } from '../../shared/config/config-snapshot.ts'
import { functionOption, parseOptions } from '../../shared/config/parse-options.ts'
import { PluginsOption } from '../../shared/plugins.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { RedisClientOption } from '../redis/redis-client-option.ts'
import { configStoreKeys } from './config-store-keys.ts'
import { createFollowState, messageOf } from './create-follow-state.ts'
import { type PublishedSnapshot, SnapshotNotice } from './published-snapshot.ts'
import { type CurrentRead, readCurrentSnapshot } from './read-current-snapshot.ts'
import type { SnapshotFeed } from './snapshot-feed.ts'

export const FollowRedisSnapshotsOptions = z.strictObject({
  redis: RedisClientOption,
  prefix: z
    .string()
    .default(defaultKeyPrefix)
    .describe('Namespace of every key (config-store-keys.ts)'),
  pollMs: z
    .int()
    .positive()
    .default(5_000)
    .describe('How often config:current is read besides notices, in case one was missed'),
  onSnapshot: functionOption<(published: PublishedSnapshot) => void | Promise<void>>()
    .optional()
    .describe('Each newer verified snapshot, the first included, in version order'),
  onRefused: functionOption<(reason: string, version: number | null) => void>()
    .optional()
    .describe('A newer version that failed verification; the held one stays'),
  log: functionOption<(line: string) => void>()
    .default(() => () => {})
    .describe('Refusals, outages and recoveries, one line each'),
  plugins: PluginsOption,
})
export type FollowRedisSnapshotsOptions = z.infer<typeof FollowRedisSnapshotsOptions>
export type FollowRedisSnapshotsOptionsInput = z.input<typeof FollowRedisSnapshotsOptions>

export interface RedisSnapshotFollower extends SnapshotFeed {
  /** Settles once the first read is done: the snapshot, or null (none, refused, unreachable). */
  ready: Promise<PublishedSnapshot | null>
}

/**
 * Follows the snapshots a RedisSnapshotStore publishes: reads config:current at start, on
 * each notice, every pollMs and after every reconnect, and hands on each newer version
 * once verified. Versions never go backwards; a refused one is not read again. Outages
 * are logged, never thrown: ioredis reconnects and the follower resubscribes.
 */
export function followRedisSnapshots(
  input: FollowRedisSnapshotsOptionsInput,
): RedisSnapshotFollower {
  const options = parseOptions(FollowRedisSnapshotsOptions, input, 'redis snapshot follower')
  const keys = configStoreKeys(options.prefix)
  const schema = snapshotSchemaOf(options.plugins)
  const owned = typeof options.redis === 'string'
  const reader = typeof options.redis === 'string' ? openReader(options.redis) : options.redis
  const subscriber = openSubscriber(options.redis)
  const state = createFollowState(options)
  let closed = false
  let running: Promise<void> | null = null
  let again = false

  async function check() {
    let read: CurrentRead
    try {
      read = await readCurrentSnapshot(reader, keys, state.known(), schema)
    } catch (error) {
      state.failed(error)
      return
    }
    if (!closed) await state.accept(read)
  }

  /** One check at a time; a request during one runs one more after it. */
  function refresh(): Promise<void> {
    if (closed) return Promise.resolve()
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        await check()
      } while (again && !closed)
    })().finally(() => {
      running = null
    })
    return running
  }

  const onNotice = (channel: string, message: string) => {
    const notice = channel === keys.notices ? parseNotice(message) : null
    if (notice === null || notice.version > state.known()) void refresh()
  }
  let subscribedBefore = false
  const onSubscriberReady = () => {
    subscriber.subscribe(keys.notices).then(
      () => {
        if (subscribedBefore) options.log('config follower: resubscribed to notices')
        subscribedBefore = true
        // Notices sent while the connection was down are lost: read current instead.
        void refresh()
      },
      (error: unknown) => options.log(`config follower: subscribing: ${messageOf(error)}`),
    )
  }
  const onReaderReady = () => void refresh()
  subscriber.on('message', onNotice)
  subscriber.on('ready', onSubscriberReady)
  subscriber.on('error', () => undefined)
  reader.on('ready', onReaderReady)
  const timer = setInterval(() => void refresh(), options.pollMs)
  timer.unref()

  return {
    ready: refresh().then(() => state.held()),
    current: () => state.held(),
    subscribe(listener) {
      state.listeners.add(listener)
      return () => state.listeners.delete(listener)
    },
    async close() {
      closed = true
      clearInterval(timer)
      reader.off('ready', onReaderReady)
      subscriber.disconnect()
      if (owned) await reader.quit().catch(() => reader.disconnect())
    },
  }
}

/** Queued commands fail after one reconnect attempt: a poll during an outage fails fast. */
function openReader(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5_000 })
  client.on('error', () => undefined)
  return client
}

/** Its own connection: one in subscriber mode can run nothing else. */
function openSubscriber(redis: string | Redis): Redis {
  // Subscribed on each 'ready' by the follower itself, so a reconnect resubscribes once.
  const override = { lazyConnect: false, autoResubscribe: false, maxRetriesPerRequest: null }
  return typeof redis === 'string' ? new Redis(redis, override) : redis.duplicate(override)
}

function parseNotice(message: string): SnapshotNotice | null {
  try {
    const parsed = SnapshotNotice.safeParse(JSON.parse(message))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}
