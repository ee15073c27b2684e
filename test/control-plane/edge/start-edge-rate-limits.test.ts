import { afterEach, describe, expect, it } from 'vitest'
import { createRedisQuotaStore } from '../../../control-plane/edge/redis-quota-store.ts'
import { type RunningEdge, startEdge } from '../../../control-plane/edge/start-edge.ts'
import { useDemoEdgeFixture } from '../../support/demo-edge-fixture.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

/**
 * The Node edge with its quotas in Redis (kinfctl edge with REDIS_URL): OpenAI's
 * x-ratelimit-remaining-* read back from the buckets every replica shares, not only the
 * limits.
 */
const demo = useDemoEdgeFixture()
const { redis, uniquePrefix } = useRedisTestNamespaces()
let edge: RunningEdge | null = null
afterEach(async () => {
  await edge?.close()
  edge = null
})

describe('the Node edge’s rate-limit headers on Redis quotas', () => {
  it('say what is left of the tenant’s shared buckets, on answers and refusals', async () => {
    const snapshot = structuredClone(demo.snapshot)
    const tenant = snapshot.policies['demo/demo']?.spec.tenants[0]
    if (!tenant) throw new Error('the demo snapshot has no tenant')
    tenant.quotas = { requestsPerMinute: 2, tokensPerMinute: 100_000, failureMode: 'FailClose' }
    const quotas = await createRedisQuotaStore({ redis, prefix: uniquePrefix() })
    edge = await startEdge({
      port: 0,
      metricsPort: null,
      config: async () => snapshot,
      // No scorer answers: the request fails after its admission, which its headers still say.
      scorerUrls: ['http://127.0.0.1:1'],
      signingSecret: 'x'.repeat(32),
      quotas,
      quotaReader: quotas.reader,
      log: () => {},
    })
    const send = () =>
      fetch(`${edge?.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.demoKey}` },
        body: JSON.stringify({
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content: 'hello' }],
          max_tokens: 10,
        }),
      })
    const remaining = async () => {
      const response = await send()
      await response.body?.cancel()
      return {
        limit: response.headers.get('x-ratelimit-limit-requests'),
        remaining: response.headers.get('x-ratelimit-remaining-requests'),
        tokens: Number(response.headers.get('x-ratelimit-remaining-tokens')),
      }
    }
    const first = await remaining()
    expect(first).toMatchObject({ limit: '2', remaining: '1' })
    expect(first.tokens).toBeLessThan(100_000)
    expect(await remaining()).toMatchObject({ limit: '2', remaining: '0' })
    // Refused: nothing left, as the shared bucket says.
    expect(await remaining()).toMatchObject({ limit: '2', remaining: '0' })
    await quotas.close()
  })
})
