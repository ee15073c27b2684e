import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { DecisionEntry, type StoredDecisionEntry } from '../../shared/state/decision-entry.ts'
import { ReplicaPodViews } from '../../shared/state/pod-state.ts'
import type { StateStore } from '../../shared/state/state-store.ts'
import { clientOf, RedisClientOption } from '../redis/redis-client-option.ts'
import { stateKeys } from './state-keys.ts'

export const RedisStateStoreOptions = z.strictObject({
  redis: RedisClientOption,
  prefix: z.string().default(defaultKeyPrefix).describe('Namespace of every key (state-keys.ts)'),
  maxDecisions: z
    .int()
    .min(1)
    .default(10_000)
    .describe('Decision log length kept, approximately (XADD MAXLEN ~)'),
})
export type RedisStateStoreOptionsInput = z.input<typeof RedisStateStoreOptions>

/**
 * The shared state in Redis (layout in state-keys.ts). A write is one MULTI: a replica's
 * view with its TTL and its entry in the replica set; appends are one pipeline of XADDs.
 * Stored values that do not parse are skipped, not fatal: another version may write them.
 */
export async function createRedisStateStore(
  input: RedisStateStoreOptionsInput,
): Promise<StateStore> {
  const options = parseOptions(RedisStateStoreOptions, input, 'redis state store')
  const keys = stateKeys(options.prefix)
  const { redis, release } = await clientOf(options.redis, 'redis state store')
  const maxLen = String(options.maxDecisions)

  return {
    async writePodViews(views, ttlMs) {
      const expiresAt = Math.ceil(views.writtenAtMs + ttlMs)
      await attempt('writing pod views', () =>
        redis
          .multi()
          .set(keys.pods(views.replica), JSON.stringify(views), 'PX', Math.max(1, Math.ceil(ttlMs)))
          .zadd(keys.replicas, expiresAt, views.replica)
          .zremrangebyscore(keys.replicas, '-inf', Math.floor(views.writtenAtMs))
          .exec(),
      )
    },

    async readPodViews(nowMs) {
      const texts = await attempt('reading pod views', async () => {
        const replicas = await redis.zrangebyscore(keys.replicas, `(${nowMs}`, '+inf')
        return replicas.length === 0 ? [] : redis.mget(...replicas.map(keys.pods))
      })
      return texts.flatMap((text) => {
        const parsed = text === null ? null : ReplicaPodViews.safeParse(parseJson(text))
        return parsed?.success ? [parsed.data] : []
      })
    },

    async appendDecisions(entries) {
      if (entries.length === 0) return
      const pipeline = redis.pipeline()
      for (const entry of entries)
        pipeline.xadd(keys.decisions, 'MAXLEN', '~', maxLen, '*', 'e', JSON.stringify(entry))
      const results = await attempt('appending decisions', () => pipeline.exec())
      const failed = results?.find(([error]) => error !== null)?.[0]
      if (failed) throw unavailable('appending decisions', failed)
    },

    async readDecisions(query) {
      const { sinceMs, afterId, count = 1_000 } = query
      const since = sinceMs === undefined ? '-' : `${Math.max(0, Math.floor(sinceMs))}-0`
      const min = afterId === undefined ? since : laterOf(since, `(${afterId}`)
      const reply = await attempt('reading decisions', () =>
        redis.xrevrange(keys.decisions, '+', min, 'COUNT', count),
      )
      return reply.reverse().flatMap(([id, fields]) => {
        const at = fields.indexOf('e')
        const parsed = DecisionEntry.safeParse(parseJson(fields[at + 1] ?? ''))
        return at >= 0 && parsed.success ? [{ id, entry: parsed.data } as StoredDecisionEntry] : []
      })
    },

    close: release,
  }
}

/** The later of a stream id bound and an exclusive one; '-' is before everything. */
function laterOf(since: string, exclusiveAfter: string): string {
  if (since === '-') return exclusiveAfter
  const [sinceMs = 0] = since.split('-').map(Number)
  const [afterMs = 0] = exclusiveAfter.slice(1).split('-').map(Number)
  return afterMs >= sinceMs ? exclusiveAfter : since
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

async function attempt<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw unavailable(operation, error)
  }
}

function unavailable(operation: string, error: unknown): KinfError {
  if (KinfError.isInstance(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new KinfError('upstream_unavailable', `redis state store: ${operation}: ${message}`, {
    cause: error,
  })
}
