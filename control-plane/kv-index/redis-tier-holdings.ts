import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { wholeNumber } from '../../shared/kv-index/kv-index-limits.ts'
import {
  type TierEvent,
  type TierHoldings,
  TierHoldingsLimits,
} from '../../shared/kv-index/tier-holdings.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { connectRedis } from '../redis/connect-redis.ts'
import { RedisClientOption } from '../redis/redis-client-option.ts'
import { createInOrderPerPod } from './in-order-per-pod.ts'
import { hexOf } from './redis-kv-index-batch.ts'
import { loadRedisScripts } from './redis-kv-index-scripts.ts'
import { redisTierHoldingsLua } from './redis-tier-holdings-lua.ts'

export const RedisTierHoldingsOptions = TierHoldingsLimits.extend({
  redis: RedisClientOption,
  prefix: z
    .string()
    .default(defaultKeyPrefix)
    .describe("Namespace of every key: the KvIndex's, whose key names it does not use"),
  commandTimeoutMs: wholeNumber(1)
    .default(2_000)
    .describe('A command of the client made from a URL fails after this long without a reply'),
})
export type RedisTierHoldingsOptionsInput = z.input<typeof RedisTierHoldingsOptions>

const subject = 'redis tier holdings'

/**
 * Tier holdings in Redis, shared by scorer replicas (layout in redis-tier-holdings-lua.ts):
 * `apply` is one EVALSHA, as are `holds` and `counts` whatever the pod count. Batches of one
 * pod are applied in order by one writer at a time, as the Redis KvIndex's.
 */
export async function createRedisTierHoldings(
  input: RedisTierHoldingsOptionsInput,
): Promise<TierHoldings> {
  const options = parseOptions(RedisTierHoldingsOptions, input, subject)
  const { prefix } = options
  const maxHashes = String(options.maxHashesPerTier)
  const maxTiers = String(options.maxTiersPerPod)
  const owned = typeof options.redis === 'string'
  const redis =
    typeof options.redis === 'string'
      ? await connectRedis(options.redis, subject, { commandTimeoutMs: options.commandTimeoutMs })
      : options.redis
  const release = async () => {
    if (owned) await redis.quit().catch(() => redis.disconnect())
  }
  const scripts = await loadRedisScripts(redis, redisTierHoldingsLua, subject).catch(
    async (error: unknown) => {
      await release()
      throw error
    },
  )
  // Apply and dropPod calls of one pod reach Redis in the order they were made.
  const queue = createInOrderPerPod()

  return {
    apply(pod, events, seq) {
      const args = [prefix, pod, seq === undefined ? '' : seq.toString(), maxHashes, maxTiers]
      for (const event of events) appendOperation(args, event)
      return queue.run(pod, async () => {
        const duplicate = (await scripts.run('apply', args)) === 1
        return { duplicate }
      })
    },

    async holds(pod, medium, hashes) {
      if (hashes.length === 0) return []
      const args = [prefix, pod, medium]
      for (const hash of hashes) args.push(typeof hash === 'bigint' ? hexOf(hash) : '')
      const held = (await scripts.run('holds', args)) as number[]
      return hashes.map((hash, i) => typeof hash === 'bigint' && held[i] === 1)
    },

    async counts(pods) {
      if (pods.length === 0) return []
      const flat = (await scripts.run('counts', [prefix, ...pods])) as (string | number)[][]
      return pods.map((_, i) => {
        const entries: [string, number][] = []
        const list = flat[i] ?? []
        for (let k = 0; k < list.length; k += 2) {
          entries.push([String(list[k]), Number(list[k + 1])])
        }
        return Object.fromEntries(entries)
      })
    },

    dropPod(pod) {
      return queue.run(pod, async () => {
        await scripts.run('dropPod', [prefix, pod])
      })
    },

    async close() {
      await queue.settled()
      await release()
    },
  }
}

/** The script's operation for one event; events without a hash send nothing. */
function appendOperation(args: string[], event: TierEvent): void {
  if (event.type === 'cleared') {
    args.push('C')
    return
  }
  const hashes = Array.isArray(event.engineHashes) ? event.engineHashes : []
  const at = args.length
  args.push(event.type === 'stored' ? 'S' : 'R', event.medium, '0')
  let n = 0
  for (const hash of hashes) {
    if (typeof hash !== 'bigint') continue
    args.push(hexOf(hash))
    n++
  }
  if (n === 0) args.length = at
  else args[at + 2] = String(n)
}
