import { describe, expect, it } from 'vitest'
import { createRedisQuotaStore } from '../../../control-plane/edge/redis-quota-store.ts'
import { describeQuotaStoreConformance } from '../../support/quota-store-conformance.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

describeQuotaStoreConformance('redis', () =>
  createRedisQuotaStore({ redis, prefix: uniquePrefix() }),
)

const t0 = 1_800_000_000_000

describe('redis quota store', () => {
  it('keeps its keys under the prefix, expiring', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisQuotaStore({ redis, prefix })
    const admission = await store.admit(
      'acme',
      { requestsPerMinute: 6, tokensPerMinute: 600 },
      300,
      t0,
    )
    expect(admission.admitted).toBe(true)
    const keys = (await redis.keys(`${prefix}*`)).sort()
    expect(keys).toHaveLength(2)
    expect(keys[0]).toBe(`${prefix}quota:{acme}`)
    // Buckets: full again after 30 s (tokens) plus a minute's margin; the reservation 10 min.
    const ttl = await redis.pttl(`${prefix}quota:{acme}`)
    expect(ttl).toBeGreaterThan(60_000)
    expect(ttl).toBeLessThanOrEqual(90_000)
    expect(await redis.pttl(keys[1] as string)).toBeGreaterThan(590_000)
    if (admission.admitted) {
      await store.settle(
        'acme',
        { requestsPerMinute: 6, tokensPerMinute: 600 },
        admission.reservation,
        300,
        300,
        t0,
      )
    }
    expect(await redis.keys(`${prefix}*`)).toEqual([`${prefix}quota:{acme}`])
  })

  it('shares the ledger between replicas', async () => {
    const prefix = uniquePrefix()
    const [a, b] = await Promise.all([
      createRedisQuotaStore({ redis, prefix }),
      createRedisQuotaStore({ redis, prefix }),
    ])
    const limits = { tokensPerMinute: 1_000 }
    const first = await a.admit('acme', limits, 900, t0)
    expect((await b.admit('acme', limits, 200, t0)).admitted).toBe(false)
    if (first.admitted) await b.settle('acme', limits, first.reservation, 900, 100, t0)
    expect((await b.admit('acme', limits, 900, t0)).admitted).toBe(true)
  })

  it('reloads its scripts after Redis forgets them', async () => {
    const store = await createRedisQuotaStore({ redis, prefix: uniquePrefix() })
    await redis.script('FLUSH')
    expect((await store.admit('acme', { requestsPerMinute: 1 }, 1, t0)).admitted).toBe(true)
    expect((await store.admit('acme', { requestsPerMinute: 1 }, 1, t0)).admitted).toBe(false)
  })

  it('reports an unreachable Redis as upstream_unavailable', async () => {
    await expect(createRedisQuotaStore({ redis: 'redis://127.0.0.1:1' })).rejects.toMatchObject({
      code: 'upstream_unavailable',
      message: expect.stringMatching(/^redis quota store: connecting:/),
    })
  })

  it('refuses a bad reservationTtlMs before connecting', async () => {
    for (const reservationTtlMs of [0, -1, 1.5, Number.NaN]) {
      await expect(
        createRedisQuotaStore({ redis: 'redis://127.0.0.1:1', reservationTtlMs }),
      ).rejects.toMatchObject({
        code: 'invalid_config',
        message: 'redis quota store: reservationTtlMs must be a positive integer',
      })
    }
  })

  it('refuses bad limits before touching Redis', async () => {
    const store = await createRedisQuotaStore({ redis, prefix: uniquePrefix() })
    await expect(store.admit('acme', { requestsPerMinute: 0 }, 1, t0)).rejects.toMatchObject({
      code: 'invalid_request',
    })
  })
})

describe('redis quota store’s reader', () => {
  it('reads back on its own connection what each admission left (the x-ratelimit-remaining-* headers)', async () => {
    const store = await createRedisQuotaStore({ redis, prefix: uniquePrefix() })
    const limits = { requestsPerMinute: 5, tokensPerMinute: 1_000 }
    expect(await store.reader.buckets(['acme'])).toEqual([null])
    await store.admit('acme', limits, 300, t0)
    const [after] = await store.reader.buckets(['acme'])
    expect(after).toEqual({
      requests: { level: 4, updatedMs: t0 },
      tokens: { level: 700, updatedMs: t0 },
    })
  })
})
