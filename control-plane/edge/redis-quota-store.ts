import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { quotaBucketFields, quotaKeys } from '../../shared/protocol/quota-keys.ts'
import { checkQuotaClock, checkQuotaCount, quotaRefusal } from '../../shared/quota/quota-ledger.ts'
import {
  parseQuotaLimits,
  type QuotaLimits,
  type QuotaStore,
} from '../../shared/quota/quota-store.ts'
import { QuotaStoreOptions } from '../../shared/quota/quota-store-options.ts'
import type { QuotaLedgerReader } from '../../shared/state/quota-ledger-reader.ts'
import { connectRedis } from '../redis/connect-redis.ts'
import { RedisClientOption } from '../redis/redis-client-option.ts'
import { createRedisQuotaLedgerReader } from '../state/redis-quota-ledger-reader.ts'

const {
  requestsLevel: rl,
  requestsUpdated: ru,
  tokensLevel: tl,
  tokensUpdated: tu,
} = quotaBucketFields

/**
 * The ledger of shared/quota/quota-ledger.ts in Lua, so that each admit and each settle is
 * one atomic EVALSHA. KEYS[1] is the tenant's buckets (a hash, shared/protocol/quota-keys.ts),
 * KEYS[2] one reservation (its estimate, expiring on its own). Limits come as ARGV[1..2],
 * '' meaning none. The buckets key expires a minute after the buckets would be full again,
 * when it equals a fresh state.
 */
const prelude = `
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], '${rl}', '${ru}', '${tl}', '${tu}')
local function refill(level, updated, capacity)
  level = tonumber(level)
  if level == nil then return capacity, now end
  local elapsed = math.max(0, now - tonumber(updated))
  return math.min(capacity, level + elapsed * capacity / 60000), math.max(now, tonumber(updated))
end
local function wait(level, capacity, need)
  local target = math.min(need, capacity)
  if level >= target then return 0 end
  return (target - level) * 60000 / capacity
end
local function num(x) return string.format('%.17g', x) end
local function save(rl, ru, tl, tu)
  local untilFull = 0
  if rpm then
    redis.call('HSET', KEYS[1], '${rl}', num(rl), '${ru}', num(ru))
    untilFull = math.max(untilFull, wait(rl, rpm, rpm))
  else
    redis.call('HDEL', KEYS[1], '${rl}', '${ru}')
  end
  if tpm then
    redis.call('HSET', KEYS[1], '${tl}', num(tl), '${tu}', num(tu))
    untilFull = math.max(untilFull, wait(tl, tpm, tpm))
  else
    redis.call('HDEL', KEYS[1], '${tl}', '${tu}')
  end
  if rpm or tpm then redis.call('PEXPIRE', KEYS[1], math.ceil(untilFull) + 60000) end
end
local rl, ru, tl, tu
if rpm then rl, ru = refill(state[1], state[2], rpm) end
if tpm then tl, tu = refill(state[3], state[4], tpm) end
`

/** ARGV[3] estimate, ARGV[5] reservation TTL ms. Returns {1} or {0, limit, waitMs, need, capacity}. */
const admitLua = `${prelude}
local need = tonumber(ARGV[3])
local worst = nil
if rpm then
  local w = wait(rl, rpm, 1)
  if w > 0 then worst = {'requests', w, 1, rpm} end
end
if tpm then
  local w = wait(tl, tpm, need)
  if w > 0 and (worst == nil or w > worst[2]) then worst = {'tokens', w, need, tpm} end
end
if worst then return {0, worst[1], num(worst[2]), worst[3], worst[4]} end
if rpm then rl = rl - 1 end
if tpm then
  tl = tl - need
  redis.call('SET', KEYS[2], need, 'PX', ARGV[5])
end
save(rl, ru, tl, tu)
return {1}
`

/** ARGV[3] actual tokens. A reservation unknown, expired or already settled changes nothing. */
const settleLua = `${prelude}
local estimate = tonumber(redis.call('GET', KEYS[2]))
if estimate == nil then return 0 end
redis.call('DEL', KEYS[2])
if tpm then tl = math.min(tpm, tl - (tonumber(ARGV[3]) - estimate)) end
save(rl, ru, tl, tu)
return 1
`

const scripts = { admit: admitLua, settle: settleLua } as const
type ScriptName = keyof typeof scripts

export const RedisQuotaStoreOptions = QuotaStoreOptions.extend({
  redis: RedisClientOption,
  prefix: z.string().default(defaultKeyPrefix).describe('Namespace of every key'),
})
export type RedisQuotaStoreOptions = z.infer<typeof RedisQuotaStoreOptions>
export type RedisQuotaStoreOptionsInput = z.input<typeof RedisQuotaStoreOptions>

export interface RedisQuotaStore extends QuotaStore {
  /** Reads the buckets back, on the same connection: the x-ratelimit-remaining-* headers. */
  reader: QuotaLedgerReader
  close(): Promise<void>
}

/**
 * Quotas shared by every edge replica on Node, in Redis. Keys carry the tenant in a hash
 * tag, so one tenant's keys sit in one Redis Cluster slot.
 */
export async function createRedisQuotaStore(
  input: RedisQuotaStoreOptionsInput,
): Promise<RedisQuotaStore> {
  const options = parseOptions(RedisQuotaStoreOptions, input, 'redis quota store')
  const { prefix, reservationTtlMs: ttlMs } = options
  const owned = typeof options.redis === 'string'
  const redis =
    typeof options.redis === 'string'
      ? await connectRedis(options.redis, 'redis quota store')
      : options.redis
  const shas = new Map<ScriptName, string>()
  async function load(name: ScriptName): Promise<string> {
    const sha = (await redis.script('LOAD', scripts[name])) as string
    shas.set(name, sha)
    return sha
  }
  try {
    for (const name of Object.keys(scripts) as ScriptName[]) await load(name)
  } catch (error) {
    if (owned) redis.disconnect()
    throw unavailable('loading scripts', error)
  }

  /** EVALSHA; after a NOSCRIPT (Redis lost its script cache) loads it again, once. */
  async function run(name: ScriptName, keys: string[], args: string[]): Promise<unknown> {
    const call = (sha: string) => redis.call('EVALSHA', [sha, keys.length, ...keys, ...args])
    try {
      try {
        return await call(shas.get(name) as string)
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error
        return await call(await load(name))
      }
    } catch (error) {
      throw unavailable(name, error)
    }
  }

  const keys = quotaKeys(prefix)
  const keysOf = (tenant: string, reservation: string) => [
    keys.buckets(tenant),
    keys.reservation(tenant, reservation),
  ]
  const limitArgs = (limits: QuotaLimits) => [
    String(limits.requestsPerMinute ?? ''),
    String(limits.tokensPerMinute ?? ''),
  ]

  return {
    async admit(tenant, limits, estimatedTokens, nowMs) {
      const checked = parseQuotaLimits(limits)
      checkQuotaCount('estimatedTokens', estimatedTokens)
      checkQuotaClock(nowMs)
      const reservation = randomUUID()
      const reply = (await run('admit', keysOf(tenant, reservation), [
        ...limitArgs(checked),
        String(estimatedTokens),
        String(nowMs),
        String(ttlMs),
      ])) as [number, string?, string?, number?, number?]
      if (reply[0] === 1) return { admitted: true, reservation }
      const [, limit, waitMs, need, capacity] = reply
      return quotaRefusal(
        limit === 'requests' ? 'requests' : 'tokens',
        Number(waitMs),
        Number(need),
        Number(capacity),
      )
    },

    async settle(tenant, limits, reservation, _estimatedTokens, actualTokens, nowMs) {
      const checked = parseQuotaLimits(limits)
      checkQuotaCount('actualTokens', actualTokens)
      checkQuotaClock(nowMs)
      if (typeof reservation !== 'string' || reservation.length === 0) return
      await run('settle', keysOf(tenant, reservation), [
        ...limitArgs(checked),
        String(actualTokens),
        String(nowMs),
      ])
    },

    reader: createRedisQuotaLedgerReader(redis, prefix),

    async close() {
      if (owned) await redis.quit().catch(() => redis.disconnect())
    },
  }
}

function unavailable(operation: string, error: unknown): KinfError {
  if (KinfError.isInstance(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new KinfError('upstream_unavailable', `redis quota store: ${operation}: ${message}`, {
    cause: error,
  })
}
