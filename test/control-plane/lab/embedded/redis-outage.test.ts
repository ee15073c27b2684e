import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRedisQuotaStore,
  type RedisQuotaStore,
} from '../../../../control-plane/edge/redis-quota-store.ts'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { mintApiKey, sha256HexOf } from '../../../../shared/tenancy/api-key.ts'
import { post, start } from '../../../support/embedded-stack.ts'
import { useRedisTestNamespaces } from '../../../support/redis-test-namespaces.ts'
import { startTcpProxy, type TcpProxy } from '../../../support/tcp-proxy.ts'

const { redis } = useRedisTestNamespaces()
const ask = { model: 'qwen3.8-27b-fp8', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }
/** The demo tenant's limit here: small, so the local bucket's refusal shows. */
const requestsPerMinute = 5

/**
 * Redis behind a proxy the test cuts: what clients see while the quota store is away. The
 * demo tenant keeps the default failure mode (FailOpen); "strict" is FailClose.
 */
describe('the embedded default while Redis is unreachable', () => {
  let proxy: TcpProxy
  let quotas: RedisQuotaStore
  let stack: EmbeddedStack
  let prefix: string
  let strictKey: string
  const logs: string[] = []
  beforeAll(async () => {
    proxy = await startTcpProxy(6379)
    prefix = `kinf-test:${randomUUID()}:`
    quotas = await createRedisQuotaStore({ redis: proxy.url, prefix })
    const minted = mintApiKey((n) => randomBytes(n), { id: 'strict' })
    strictKey = minted.key
    const strictHash = await sha256HexOf(minted.secret)
    stack = await start({
      redisUrl: proxy.url,
      redisPrefix: prefix,
      quotas,
      log: (line) => logs.push(line),
      patch: (resource) => {
        if (resource.kind !== 'InferencePolicy') return
        const demo = resource.spec.tenants[0]
        if (!demo?.quotas) throw new Error('the demo tenant has no quotas')
        resource.spec.tenants.push({
          ...structuredClone(demo),
          name: 'strict',
          apiKeys: [{ id: 'strict', sha256: strictHash }],
          quotas: { ...demo.quotas, failureMode: 'FailClose' },
        })
        demo.quotas = { requestsPerMinute, tokensPerMinute: 1_000_000, failureMode: 'FailOpen' }
      },
    })
  }, 60_000)
  afterAll(async () => {
    await stack?.close()
    await quotas?.close()
    await proxy?.stop()
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  })
  const strict = () => post(stack, ask, { authorization: `Bearer ${strictKey}` })
  const fallbacks = (mode: string) =>
    Number(
      new RegExp(`kinference_edge_quota_fallback_total\\{failure_mode="${mode}"\\} (\\d+)`).exec(
        stack.edge.metrics.render(),
      )?.[1] ?? 0,
    )

  it('serves FailOpen tenants from the edge’s own buckets, still limited; FailClose ones get 503', async () => {
    expect((await post(stack, ask)).status).toBe(200)
    expect((await strict()).status).toBe(200)
    expect(fallbacks('FailOpen')).toBe(0)
    await proxy.stop()

    const refused = await strict()
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    const { error } = (await refused.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('upstream_unavailable')
    expect(error.message).toContain('Quotas cannot be checked right now')
    // The client library's internals ("Stream isn't writeable and enableOfflineQueue…")
    // stay in the log.
    expect(error.message).not.toMatch(/redis|writeable|offline|retries/i)
    expect(logs.some((line) => line.startsWith('quota admission failed for strict: redis'))).toBe(
      true,
    )
    expect(fallbacks('FailClose')).toBe(1)

    // The default tenant: served against this edge's bucket, as many as its limit allows.
    for (let i = 0; i < requestsPerMinute; i++) expect((await post(stack, ask)).status).toBe(200)
    const limited = await post(stack, ask)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(fallbacks('FailOpen')).toBe(requestsPerMinute + 1)
    expect(logs).toContainEqual(
      expect.stringMatching(/^quota admission failed for demo: redis.*local bucket \(FailOpen\)$/),
    )

    await proxy.start()
    await expect
      .poll(async () => (await strict()).status, { timeout: 10_000, interval: 200 })
      .toBe(200)
  })
})
