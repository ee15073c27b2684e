import { describe, expect, it } from 'vitest'
import { createRedisStateStore } from '../../../control-plane/state/redis-state-store.ts'
import { stateKeys } from '../../../control-plane/state/state-keys.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { describeStateStoreConformance } from '../../support/state-store-conformance.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

describeStateStoreConformance('redis', (options) =>
  createRedisStateStore({ redis, prefix: uniquePrefix(), ...options }),
)

describe('redis state store', () => {
  it('skips stored values it cannot parse', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisStateStore({ redis, prefix })
    const keys = stateKeys(prefix)
    await redis.zadd(keys.replicas, Date.now() + 60_000, 'bad')
    await redis.set(keys.pods('bad'), '{"replica":')
    await redis.xadd(keys.decisions, '*', 'e', '{"kind":"nonsense"}')
    expect(await store.readPodViews(Date.now())).toEqual([])
    expect(await store.readDecisions({})).toEqual([])
  })

  it('fails with upstream_unavailable when redis is unreachable', async () => {
    await expect(createRedisStateStore({ redis: 'redis://127.0.0.1:1' })).rejects.toMatchObject({
      code: 'upstream_unavailable',
    })
  })
})
