import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { keyHex } from '../../shared/kv-index/block-keys.ts'
import type { ApplyResult, KvIndex, PodId } from '../../shared/kv-index/kv-index.ts'
import { KvIndexLimits, wholeNumber } from '../../shared/kv-index/kv-index-limits.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { connectRedis } from '../redis/connect-redis.ts'
import { RedisClientOption } from '../redis/redis-client-option.ts'
import { createInOrderPerPod } from './in-order-per-pod.ts'
import { hexOf, parentsToRead, planBatch } from './redis-kv-index-batch.ts'
import { RedisKvIndexHints } from './redis-kv-index-hints.ts'
import { loadRedisKvIndexScripts, toUpstreamError } from './redis-kv-index-scripts.ts'

/**
 * Options of the Redis index. A pod exceeding maxEngineHashesPerPod is cleared (so many
 * more than any GPU holds means lost BlockRemoved events); the memory index forgets the
 * oldest instead, which in Redis would need a per-block order costing a quarter of apply.
 * Past maxSpeculative the entries expiring first go.
 */
export const RedisKvIndexOptions = KvIndexLimits.extend({
  redis: RedisClientOption,
  prefix: z
    .string()
    .default(defaultKeyPrefix)
    .describe('Namespace of every key; one per pool, or per test'),
  maxHintsPerPod: wholeNumber(1)
    .default(262_144)
    .describe('Parent-key hints this replica keeps per pod (oldest first out)'),
  maxHintPods: wholeNumber(1).default(1024).describe('Pods with hints (least recently used out)'),
  commandTimeoutMs: wholeNumber(1)
    .default(2_000)
    .describe('A command of the client made from a URL fails after this long without a reply'),
})
export type RedisKvIndexOptions = z.infer<typeof RedisKvIndexOptions>
export type RedisKvIndexOptionsInput = z.input<typeof RedisKvIndexOptions>

/** The Redis index, and one round trip that tells whether Redis answers (guarded-kv-index.ts). */
export interface RedisKvIndex extends KvIndex {
  ping(): Promise<void>
}

/**
 * The KvIndex shared by scorer replicas, in Redis (data layout in redis-kv-index-lua.ts).
 * `apply` is one EVALSHA (plus one HMGET first when a parent is unknown to this replica's
 * hints, e.g. indexed by another replica); `lookup` is one EVALSHA for all pods.
 *
 * Batches of one pod must be applied by one writer at a time, in order (within this
 * replica, calls for a pod are queued): apply is not idempotent, so two replicas applying
 * the same batch count its blocks twice. A rejected apply may or may not have run in
 * Redis (a lost reply); the caller should treat the pod as untrustworthy and drop it.
 */
export async function createRedisKvIndex(input: RedisKvIndexOptionsInput): Promise<RedisKvIndex> {
  const options = parseOptions(RedisKvIndexOptions, input, 'redis kv index')
  const { prefix } = options
  // Script arguments are strings.
  const maxHashes = String(options.maxEngineHashesPerPod)
  const maxSpeculative = String(options.maxSpeculative)
  const purgePerLookup = String(options.purgePerLookup)
  const hints = new RedisKvIndexHints(options.maxHintsPerPod, options.maxHintPods)
  const redis =
    typeof options.redis === 'string'
      ? await connectRedis(options.redis, 'redis kv index', {
          commandTimeoutMs: options.commandTimeoutMs,
        })
      : options.redis
  const owned = typeof options.redis === 'string'
  const scripts = await loadRedisKvIndexScripts(redis).catch((error: unknown) => {
    if (owned) redis.disconnect()
    throw error
  })
  // Apply and dropPod calls of one pod reach Redis in the order they were made.
  const queue = createInOrderPerPod()

  async function readParents(pod: PodId, hashes: bigint[]): Promise<Map<bigint, string | null>> {
    const read = new Map<bigint, string | null>()
    if (hashes.length === 0) return read
    let values: (string | null)[]
    try {
      values = await redis.hmget(`${prefix}e:${pod}`, ...hashes.map(hexOf))
    } catch (error) {
      throw toUpstreamError('reading parents', error)
    }
    hashes.forEach((hash, i) => {
      const value = values[i]
      read.set(hash, typeof value === 'string' ? value.slice(0, 16) : null)
    })
    return read
  }

  async function applyNow(
    pod: PodId,
    model: string,
    events: Parameters<KvIndex['apply']>[2],
    seq: bigint | undefined,
  ): Promise<ApplyResult> {
    const podHints = hints.forPod(pod)
    const read = await readParents(pod, parentsToRead(events, podHints))
    const plan = planBatch(model, events, read, podHints)
    const reply = (await scripts.run('apply', [
      prefix,
      pod,
      maxHashes,
      seq === undefined ? '' : seq.toString(),
      ...plan.args,
    ])) as [number, number, number, number, number[], number, number]
    if (reply[6] === 1) {
      // Another replica applied this batch first; this one's plan (and hints) do not count.
      return { stored: 0, removed: 0, unknownParents: 0, unknownRemovals: 0, duplicate: true }
    }
    const rejected = new Set(reply[4])
    for (const [hash, key] of read) if (key !== null) hints.set(podHints, hash, key)
    for (const update of plan.hintUpdates) {
      if (update === 'clear') podHints.clear()
      else if (update.stored !== undefined && rejected.has(update.stored)) continue
      else if (update.key === null) podHints.delete(update.hash)
      else hints.set(podHints, update.hash, update.key)
    }
    for (const ordinal of rejected) {
      const parent = plan.parents[ordinal]
      if (parent !== undefined && parent !== null) podHints.delete(parent)
    }
    if (reply[5] === 1) podHints.clear()
    return {
      stored: reply[0],
      removed: reply[1],
      unknownParents: plan.unknownParents + reply[2],
      unknownRemovals: plan.unknownRemovals + reply[3],
      duplicate: false,
    }
  }

  return {
    apply(pod, model, events, seq) {
      return queue.run(pod, () => applyNow(pod, model, events, seq))
    },

    async lookup(chain, pods, nowMs) {
      const blocks = chain.length >>> 1
      const distinct = [...new Set(pods)]
      if (blocks === 0 || distinct.length === 0) return pods.map(() => 0)
      const args = [prefix, String(nowMs), purgePerLookup, String(distinct.length), ...distinct]
      for (let i = 0; i < blocks; i++) args.push(keyHex(chain, i))
      const depths = (await scripts.run('lookup', args)) as number[]
      const byPod = new Map(distinct.map((pod, i) => [pod, depths[i] ?? 0]))
      return pods.map((pod) => byPod.get(pod) ?? 0)
    },

    async addSpeculative(pod, chain, blocks, expiresAtMs) {
      const count = Math.min(Math.floor(blocks), chain.length >>> 1)
      if (!(count > 0) || Number.isNaN(expiresAtMs)) return
      const args = [prefix, pod, String(expiresAtMs), maxSpeculative]
      for (let i = 0; i < count; i++) args.push(keyHex(chain, i))
      await scripts.run('speculate', args)
    },

    dropPod(pod) {
      return queue.run(pod, async () => {
        hints.dropPod(pod)
        await scripts.run('dropPod', [prefix, pod])
      })
    },

    async storedBlocks(pods) {
      if (pods.length === 0) return []
      const pipeline = redis.pipeline()
      for (const pod of pods) pipeline.hlen(`${prefix}h:${pod}`)
      let results: [Error | null, unknown][] | null
      try {
        results = await pipeline.exec()
      } catch (error) {
        throw toUpstreamError('counting stored blocks', error)
      }
      return pods.map((_, i) => Number(results?.[i]?.[1] ?? 0))
    },

    async size() {
      const [entries, pods] = (await scripts.run('size', [prefix])) as [number, number]
      return { entries, pods }
    },

    async ping() {
      try {
        await redis.ping()
      } catch (error) {
        throw toUpstreamError('ping', error)
      }
    },

    async close() {
      await queue.settled()
      hints.clear()
      if (owned) await redis.quit().catch(() => redis.disconnect())
    },
  }
}
