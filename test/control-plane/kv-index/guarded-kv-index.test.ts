import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  type ColdLookupReason,
  createGuardedKvIndex,
  type GuardedKvIndex,
} from '../../../control-plane/kv-index/guarded-kv-index.ts'
import { createRedisKvIndex } from '../../../control-plane/kv-index/redis-kv-index.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { describeKvIndexConformance } from '../../support/kv-index/kv-index-conformance.ts'
import {
  chainOf,
  engineHashes,
  promptTokens,
  storedRange,
} from '../../support/kv-index/kv-index-fixtures.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

describeKvIndexConformance('guarded redis', async () => {
  const inner = await createRedisKvIndex({ redis, prefix: uniquePrefix() })
  return createGuardedKvIndex({
    index: inner,
    probe: () => inner.ping(),
    // Transparency is under test here, not the deadline.
    lookupDeadlineMs: 60_000,
    onColdLookup: () => {},
    log: () => {},
  })
})

const tokens = promptTokens(8)
const chain = chainOf(tokens)
const events = (base: bigint) => storedRange(tokens, engineHashes(8, base), 0, 8, 4)

let proxy: TcpProxy | undefined
let index: GuardedKvIndex | undefined
afterEach(async () => {
  await index?.close()
  await proxy?.stop()
  index = undefined
  proxy = undefined
})

/** A guarded index reaching the real Redis through a proxy the test cuts. */
async function guardedThroughProxy(options: { lookupDeadlineMs?: number } = {}) {
  proxy = await startTcpProxy(Number(new URL(redisUrl).port || 6379))
  const inner = await createRedisKvIndex({ redis: proxy.url, prefix: uniquePrefix() })
  const cold: ColdLookupReason[] = []
  const logs: string[] = []
  const recoveries: number[] = []
  index = createGuardedKvIndex({
    index: inner,
    probe: () => inner.ping(),
    probeIntervalMs: 20,
    onColdLookup: (reason) => cold.push(reason),
    log: (line) => logs.push(line),
    ...options,
  })
  index.onRecovered((outageMs) => {
    recoveries.push(outageMs)
  })
  return { index, proxy, cold, logs, recoveries }
}

describe('createGuardedKvIndex over Redis that goes away', () => {
  it('answers lookups cache-cold while Redis is cut, fails writes at once, and says when it is back', async () => {
    const { index, proxy, cold, logs, recoveries } = await guardedThroughProxy()
    await index.apply('pod-a', 'model-a', events(100n))
    expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([8, 0])

    await proxy.stop()
    // The lookup in flight is answered cold (past its deadline, or failed: ioredis rejects
    // it once its reconnection fails); its failure marks Redis out, and then every call
    // skips Redis altogether.
    expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([0, 0])
    await vi.waitFor(() => expect(index?.available).toBe(false), { timeout: 10_000 })
    expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([0, 0])
    expect(cold).toHaveLength(2)
    expect(['deadline', 'error']).toContain(cold[0])
    expect(cold[1]).toBe('outage')
    const refused = await index.apply('pod-a', 'model-a', events(200n)).catch((e: unknown) => e)
    expect(KinfError.isInstance(refused) && refused.code).toBe('upstream_unavailable')
    await expect(index.addSpeculative('pod-b', chain, 8, Date.now() + 60_000)).resolves.toBe(
      undefined,
    )
    expect(logs.filter((line) => line.includes('routing on load alone'))).toHaveLength(1)
    expect(recoveries).toEqual([])

    await proxy.start()
    await vi.waitFor(() => expect(recoveries).toHaveLength(1), { timeout: 10_000 })
    expect(index.available).toBe(true)
    // Nothing written during the outage is there: the listener is what rebuilds it.
    expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([8, 0])
    expect(logs.at(-1)).toMatch(/answering again after \d+ ms/)
  })

  it('drops a pod removed during the outage once Redis is back, before recovery listeners run', async () => {
    const { index, proxy, recoveries } = await guardedThroughProxy()
    await index.apply('pod-a', 'model-a', events(100n))
    await proxy.stop()
    const refused = await index.dropPod('pod-a').catch((e: unknown) => e)
    expect(KinfError.isInstance(refused) && refused.code).toBe('upstream_unavailable')
    await proxy.start()
    await vi.waitFor(() => expect(recoveries).toHaveLength(1), { timeout: 10_000 })
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
    expect(await index.size()).toEqual({ entries: 0, pods: 0 })
  })

  it('does not take a busy process for a slow Redis: a reply that came during the stall counts', async () => {
    // Straight to Redis: a proxy in this process would itself wait for the loop.
    const inner = await createRedisKvIndex({ redis: redisUrl, prefix: uniquePrefix() })
    const cold: ColdLookupReason[] = []
    index = createGuardedKvIndex({
      index: inner,
      probe: () => inner.ping(),
      lookupDeadlineMs: 20,
      onColdLookup: (reason) => cold.push(reason),
      log: () => {},
    })
    await index.apply('pod-a', 'model-a', events(100n))
    const answer = index.lookup(chain, ['pod-a'], 0)
    // The event loop blocked past the deadline (a long tokenization, say) while Redis answered.
    const until = performance.now() + 500
    while (performance.now() < until) {}
    expect(await answer).toEqual([8])
    expect(cold).toEqual([])
  })

  it('routes cache-cold a lookup Redis answers after the deadline, without calling Redis out', async () => {
    const { index, cold, recoveries } = await guardedThroughProxy({ lookupDeadlineMs: 100 })
    await index.apply('pod-a', 'model-a', events(100n))
    // Redis runs one command at a time: a script busy for 800 ms holds the lookup behind it.
    const busy = redis.eval(
      "local t = redis.call('TIME'); local s = t[1] * 1000000 + t[2]; repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - s > 800000; return 1",
      0,
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
    await busy
    expect(cold).toEqual(['deadline'])
    expect(index.available).toBe(true)
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([8])
    expect(recoveries).toEqual([])
  })
})
