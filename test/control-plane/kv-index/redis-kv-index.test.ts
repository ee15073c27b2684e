import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createRedisKvIndex } from '../../../control-plane/kv-index/redis-kv-index.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { IndexEvent } from '../../../shared/kv-index/kv-index.ts'
import { describeKvIndexConformance } from '../../support/kv-index/kv-index-conformance.ts'
import {
  chainOf,
  cleared,
  engineHashes,
  promptTokens,
  removed,
  stored,
  storedRange,
} from '../../support/kv-index/kv-index-fixtures.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()
const url = redisUrl

describeKvIndexConformance('redis', () => createRedisKvIndex({ redis, prefix: uniquePrefix() }))

const tokens = promptTokens(8)
const hashes = engineHashes(8, 100n)
const chain = chainOf(tokens)

/** The client, counting what each method is called for (scripts, reads). */
function countingClient(counts: Map<string, number>): Redis {
  return new Proxy(redis, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        const name = property === 'call' ? `${String(args[0])}` : String(property)
        counts.set(name, (counts.get(name) ?? 0) + 1)
        return value.apply(target, args)
      }
    },
  })
}

describe('createRedisKvIndex', () => {
  it('applies a batch in one script call and looks up all pods in one', async () => {
    const counts = new Map<string, number>()
    const index = await createRedisKvIndex({
      redis: countingClient(counts),
      prefix: uniquePrefix(),
    })
    counts.clear()
    const events = storedRange(tokens, hashes, 0, 8, 2)
    await index.apply('pod-a', 'model-a', events.slice(0, 2))
    await index.apply('pod-a', 'model-a', events.slice(2))
    const pods = Array.from({ length: 40 }, (_, i) => `pod-${i}`)
    expect(await index.lookup(chain, ['pod-a', ...pods], 0)).toEqual([8, ...pods.map(() => 0)])
    expect(Object.fromEntries(counts)).toEqual({ EVALSHA: 3 })
  })

  it('lets a fresh replica chain onto blocks another replica indexed', async () => {
    const prefix = uniquePrefix()
    const first = await createRedisKvIndex({ redis, prefix })
    const counts = new Map<string, number>()
    const second = await createRedisKvIndex({ redis: countingClient(counts), prefix })
    const events = storedRange(tokens, hashes, 0, 8, 4)
    await first.apply('pod-a', 'model-a', [events[0] as IndexEvent])
    counts.clear()
    expect((await second.apply('pod-a', 'model-a', [events[1] as IndexEvent])).stored).toBe(4)
    expect(Object.fromEntries(counts)).toEqual({ hmget: 1, EVALSHA: 1 })
    expect(await first.lookup(chain, ['pod-a'], 0)).toEqual([8])
  })

  it('indexes nothing on a stale hint: the parent was removed or re-keyed elsewhere', async () => {
    const prefix = uniquePrefix()
    const first = await createRedisKvIndex({ redis, prefix })
    const second = await createRedisKvIndex({ redis, prefix })
    const [parent, child] = storedRange(tokens, hashes, 0, 8, 4) as [IndexEvent, IndexEvent]
    // Another replica removes the parent: this replica's hint still has it.
    await first.apply('pod-a', 'model-a', [parent])
    await second.apply('pod-a', 'model-a', [removed(hashes[3] as bigint)])
    expect((await first.apply('pod-a', 'model-a', [child])).unknownParents).toBe(1)
    expect(await first.lookup(chain, ['pod-a'], 0)).toEqual([3])
    // Another replica maps the parent's hash to another block: chaining on the hinted key
    // would index wrong keys, so the child stays cold and the hint is dropped...
    await first.apply('pod-b', 'model-a', [parent])
    const other = promptTokens(4, 3)
    await second.apply('pod-b', 'model-a', [stored(hashes.slice(0, 4), null, other)])
    expect((await first.apply('pod-b', 'model-a', [child])).unknownParents).toBe(1)
    // ...and the next try reads the parent's key from Redis and chains on it.
    expect((await first.apply('pod-b', 'model-a', [child])).stored).toBe(4)
    const rekeyed = chainOf([...other, ...tokens.slice(16)])
    expect(await first.lookup(rekeyed, ['pod-a', 'pod-b'], 0)).toEqual([0, 8])
  })

  it('reloads its scripts when Redis has lost them', async () => {
    const index = await createRedisKvIndex({ redis, prefix: uniquePrefix() })
    await redis.script('FLUSH')
    await index.apply('pod-a', 'model-a', storedRange(tokens, hashes, 0, 8, 8))
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([8])
  })

  it.each([
    [{ maxHintPods: 0 }, 'redis kv index: maxHintPods must be a positive integer'],
    [{ maxHintsPerPod: 1.5 }, 'redis kv index: maxHintsPerPod must be a positive integer'],
    [{ maxSpeculative: -1 }, 'redis kv index: maxSpeculative must be a positive integer'],
    [{ purgePerLookup: -1 }, 'redis kv index: purgePerLookup must be a non-negative integer'],
    [{ redis: null as never }, 'redis kv index: redis must be a Redis client or a URL'],
  ])('refuses bad options before connecting: %o', async (bad, message) => {
    const refused = createRedisKvIndex({ redis: url, prefix: uniquePrefix(), ...bad })
    await expect(refused).rejects.toMatchObject({ code: 'invalid_config', message })
  })

  it('rejects with upstream_unavailable when Redis cannot be reached', async () => {
    const unreachable = createRedisKvIndex({ redis: 'redis://127.0.0.1:1', prefix: uniquePrefix() })
    await expect(unreachable).rejects.toMatchObject({ code: 'upstream_unavailable' })
    const client = new Redis(url)
    const index = await createRedisKvIndex({ redis: client, prefix: uniquePrefix() })
    client.disconnect()
    for (const call of [
      index.lookup(chain, ['pod-a'], 0),
      index.apply('pod-a', 'model-a', storedRange(tokens, hashes, 0, 8, 8)),
      index.addSpeculative('pod-a', chain, 8, 1_000),
      index.dropPod('pod-a'),
      index.size(),
    ]) {
      const error = await call.then(
        () => null,
        (reason: unknown) => reason,
      )
      expect(KinfError.isInstance(error)).toBe(true)
      expect(error).toMatchObject({ code: 'upstream_unavailable' })
    }
  })

  it('connects from a URL and quits on close', async () => {
    const index = await createRedisKvIndex({ redis: url, prefix: uniquePrefix() })
    await index.apply('pod-a', 'model-a', storedRange(tokens, hashes, 0, 8, 8))
    expect(await index.size()).toEqual({ entries: 8, pods: 1 })
    await index.dropPod('pod-a')
    await index.close()
  })

  it('clears a pod whose engine hashes exceed maxEngineHashesPerPod', async () => {
    const index = await createRedisKvIndex({
      redis,
      prefix: uniquePrefix(),
      maxEngineHashesPerPod: 5,
    })
    const events = storedRange(tokens, hashes, 0, 6, 3)
    await index.apply('pod-a', 'model-a', [events[0] as IndexEvent])
    await index.addSpeculative('pod-a', chain, 1, 1_000)
    await index.apply('pod-b', 'model-a', events)
    expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([3, 0])
    expect(await index.size()).toEqual({ entries: 3, pods: 1 })
    // Within the cap nothing is lost.
    await index.apply('pod-b', 'model-a', storedRange(tokens, hashes, 0, 5, 5))
    expect(await index.lookup(chain, ['pod-b'], 0)).toEqual([5])
  })

  it('evicts the speculative entries expiring first beyond maxSpeculative', async () => {
    const index = await createRedisKvIndex({ redis, prefix: uniquePrefix(), maxSpeculative: 4 })
    await index.addSpeculative('pod-a', chain, 6, 1_000)
    expect(await index.size()).toEqual({ entries: 4, pods: 1 })
    await index.addSpeculative('pod-b', chain, 4, 2_000)
    expect(await index.size()).toEqual({ entries: 4, pods: 1 })
    expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([0, 4])
  })

  it('leaves no key behind once every pod is dropped and speculation expired', async () => {
    const prefix = uniquePrefix()
    const index = await createRedisKvIndex({ redis, prefix })
    await index.apply('pod-a', 'model-a', storedRange(tokens, hashes, 0, 8, 3))
    await index.apply('pod-b', 'model-a', [...storedRange(tokens, hashes, 0, 8, 8), cleared])
    await index.addSpeculative('pod-c', chain, 8, 1_000)
    expect((await redis.keys(`${prefix}*`)).length).toBeGreaterThan(0)
    await index.dropPod('pod-a')
    await index.lookup(chain, ['pod-c'], 1_000)
    expect(await redis.keys(`${prefix}*`)).toEqual([])
  })
})
