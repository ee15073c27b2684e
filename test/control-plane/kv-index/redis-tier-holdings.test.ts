import { describe, expect, it } from 'vitest'
import { createRedisTierHoldings } from '../../../control-plane/kv-index/redis-tier-holdings.ts'
import { describeTierHoldingsConformance } from '../../support/kv-index/tier-holdings-conformance.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

describeTierHoldingsConformance('redis', () =>
  createRedisTierHoldings({
    redis,
    prefix: uniquePrefix(),
    maxHashesPerTier: 64,
    maxTiersPerPod: 3,
  }),
)

describe('createRedisTierHoldings', () => {
  it('is shared: what one replica applied, another reads, and a seq counts once', async () => {
    const prefix = uniquePrefix()
    const first = await createRedisTierHoldings({ redis: redisUrl, prefix })
    const second = await createRedisTierHoldings({ redis: redisUrl, prefix })
    try {
      const batch = [{ type: 'stored' as const, medium: 'CPU', engineHashes: [1n, 2n] }]
      expect(await first.apply('pod-a', batch, 0n)).toEqual({ duplicate: false })
      expect(await second.apply('pod-a', batch, 0n)).toEqual({ duplicate: true })
      expect(await second.counts(['pod-a'])).toEqual([{ CPU: 2 }])
      expect(await second.holds('pod-a', 'CPU', [2n, 3n])).toEqual([true, false])
    } finally {
      await first.close()
      await second.close()
    }
  })

  it('keys nothing outside its prefix', async () => {
    const prefix = uniquePrefix()
    const tiers = await createRedisTierHoldings({ redis, prefix })
    await tiers.apply('pod-a', [{ type: 'stored', medium: 'CPU', engineHashes: [1n] }], 0n)
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual(
      [`${prefix}t:5:pod-aCPU`, `${prefix}tm:pod-a`, `${prefix}tq:pod-a`].sort(),
    )
    await tiers.dropPod('pod-a')
    expect(await redis.keys(`${prefix}*`)).toEqual([])
    await tiers.close()
  })
})
