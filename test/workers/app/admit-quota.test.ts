import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRedisQuotaStore,
  type RedisQuotaStore,
} from '../../../control-plane/edge/redis-quota-store.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { type AccountQuotas, admitQuota, settleQuota } from '../../../workers/app/admit-quota.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.ts'

const { uniquePrefix } = useRedisTestNamespaces()

/** The real Redis quota store, behind a proxy the tests cut. */
describe('admitQuota and settleQuota', () => {
  let proxy: TcpProxy
  let store: RedisQuotaStore
  const logs: string[] = []
  const metrics = createEdgeMetrics()
  let now = 1_000_000
  const deps = () => ({
    quotas: store,
    metrics,
    nowMs: () => now,
    log: (l: string) => logs.push(l),
  })
  const admit = (account: string, quotas: AccountQuotas, tokens = 10) =>
    admitQuota(deps(), account, quotas, tokens)
  const fallbacks = (mode: string) =>
    Number(
      new RegExp(`kinference_edge_quota_fallback_total\\{failure_mode="${mode}"\\} (\\d+)`).exec(
        metrics.render(),
      )?.[1] ?? 0,
    )

  beforeAll(async () => {
    proxy = await startTcpProxy(6379)
    store = await createRedisQuotaStore({ redis: proxy.url, prefix: uniquePrefix() })
  })
  afterAll(async () => {
    await store?.close()
    await proxy?.stop()
  })

  it('uses the shared store while it answers', async () => {
    const quotas: AccountQuotas = { requestsPerMinute: 2, failureMode: 'FailOpen' }
    expect((await admit('up', quotas)).admitted).toBe(true)
    expect((await admit('up', quotas)).admitted).toBe(true)
    expect(await admit('up', quotas)).toMatchObject({ admitted: false, limit: 'requests' })
    expect(fallbacks('FailOpen')).toBe(0)
  })

  describe('while the store is unreachable', () => {
    beforeAll(() => proxy.stop())

    it('FailOpen: admits against a local bucket with the same limits, counted and logged', async () => {
      const quotas: AccountQuotas = { requestsPerMinute: 2, failureMode: 'FailOpen' }
      const first = await admit('open', quotas)
      expect(first).toMatchObject({ admitted: true })
      expect((await admit('open', quotas)).admitted).toBe(true)
      const refused = await admit('open', quotas)
      expect(refused).toMatchObject({ admitted: false, limit: 'requests' })
      expect(refused.admitted === false && refused.retryAfterSeconds).toBeGreaterThan(0)
      expect(fallbacks('FailOpen')).toBe(3)
      expect(logs).toContainEqual(
        expect.stringMatching(
          /^quota admission failed for open: redis quota store: .*; admitted against this edge's local bucket \(FailOpen\)$/,
        ),
      )
      now += 30_000 // half a minute refills one request
      expect((await admit('open', quotas)).admitted).toBe(true)
    })

    it('FailOpen: settles on the local bucket what the answer used', async () => {
      const quotas: AccountQuotas = { tokensPerMinute: 100, failureMode: 'FailOpen' }
      const first = await admit('tokens', quotas, 80)
      if (!first.admitted) throw new Error('not admitted')
      await settleQuota(deps(), 'tokens', quotas, first.reservation, 80, 10)
      // 70 of the 80 came back: another 80 fits, and then no more.
      expect((await admit('tokens', quotas, 80)).admitted).toBe(true)
      expect(await admit('tokens', quotas, 80)).toMatchObject({ admitted: false, limit: 'tokens' })
    })

    it('FailClose, and an account without a failure mode: 503 with Retry-After, logged', async () => {
      const before = fallbacks('FailClose')
      for (const quotas of [
        { requestsPerMinute: 5, failureMode: 'FailClose' },
        { requestsPerMinute: 5 },
      ] as AccountQuotas[]) {
        const error = await admit('closed', quotas).catch((e: unknown) => e)
        expect(KinfError.isInstance(error)).toBe(true)
        expect(error).toMatchObject({ code: 'upstream_unavailable', retryAfterSeconds: 1 })
        expect((error as Error).message).toContain('Quotas cannot be checked right now')
        expect((error as Error).message).not.toMatch(/redis/i)
      }
      expect(fallbacks('FailClose')).toBe(before + 2)
      expect(logs).toContainEqual(
        expect.stringMatching(/^quota admission failed for closed: redis quota store: /),
      )
    })

    it('serves an account without limits whatever the store does', async () => {
      const before = fallbacks('FailClose')
      const admission = await admit('unlimited', { failureMode: 'FailClose' })
      if (!admission.admitted) throw new Error('not admitted')
      await settleQuota(deps(), 'unlimited', {}, admission.reservation, 10, 5)
      expect(fallbacks('FailClose')).toBe(before)
    })

    it('settles a shared reservation without throwing, and logs why it could not', async () => {
      const quotas: AccountQuotas = { tokensPerMinute: 100, failureMode: 'FailOpen' }
      await expect(
        settleQuota(deps(), 'settle', quotas, 'a-redis-reservation', 10, 5),
      ).resolves.toBeUndefined()
      expect(logs).toContainEqual(
        expect.stringMatching(/^quota settle failed for settle: redis quota store: /),
      )
    })

    it('still refuses a bad request as the caller’s error, not an outage', async () => {
      const error = await admit('bad', { requestsPerMinute: 1, failureMode: 'FailOpen' }, -1).catch(
        (e: unknown) => e,
      )
      expect(error).toMatchObject({ code: 'invalid_request' })
    })
  })
})
