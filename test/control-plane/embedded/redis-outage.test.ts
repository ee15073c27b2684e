import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRedisQuotaStore,
  type RedisQuotaStore,
} from '../../../control-plane/edge/redis-quota-store.ts'
import type { EmbeddedStack } from '../../../control-plane/embedded/start-embedded.ts'
import { post, start } from '../../support/embedded-stack.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.ts'

const { redis } = useRedisTestNamespaces()
const ask = { model: 'qwen3.8-27b-fp8', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }

/** Redis behind a proxy the test cuts: what a client sees while the quota store is away. */
describe('the embedded default while Redis is unreachable', () => {
  let proxy: TcpProxy
  let quotas: RedisQuotaStore
  let stack: EmbeddedStack
  let prefix: string
  const logs: string[] = []
  beforeAll(async () => {
    proxy = await startTcpProxy(6379)
    prefix = `kinf-test:${randomUUID()}:`
    quotas = await createRedisQuotaStore({ redis: proxy.url, prefix })
    stack = await start({
      redisUrl: proxy.url,
      redisPrefix: prefix,
      quotas,
      log: (line) => logs.push(line),
    })
  }, 60_000)
  afterAll(async () => {
    await stack?.close()
    await quotas?.close()
    await proxy?.stop()
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  })

  it('answers 503 with Retry-After in its own words, logs the cause, and serves again after', async () => {
    expect((await post(stack, ask)).status).toBe(200)
    await proxy.stop()
    const refused = await post(stack, ask)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    const { error } = (await refused.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('upstream_unavailable')
    expect(error.message).toContain('Quotas cannot be checked right now')
    // The client library's internals ("Stream isn't writeable and enableOfflineQueue…")
    // stay in the log.
    expect(error.message).not.toMatch(/redis|writeable|offline|retries/i)
    expect(logs.some((line) => line.startsWith('quota admission failed for demo: redis'))).toBe(
      true,
    )
    await proxy.start()
    await expect
      .poll(async () => (await post(stack, ask)).status, { timeout: 10_000, interval: 200 })
      .toBe(200)
  })
})
