import { describe, expect, it } from 'vitest'
import { createRedisResponseStore } from '../../../control-plane/edge/redis-response-store.ts'
import { client, start } from '../../support/embedded-stack.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { responseStoreConformance } from '../../support/response-store-conformance.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

describe('the Redis response store (a real Redis)', () => {
  responseStoreConformance(
    async () => createRedisResponseStore({ redis, prefix: uniquePrefix() }),
    (_clock, ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  )

  it('keeps the edge’s conversations under the tenant, expiring, when the edge runs with Redis', async () => {
    const prefix = uniquePrefix()
    const stack = await start({ redisUrl, redisPrefix: prefix })
    try {
      const first = await client(stack).responses.create({
        model: 'qwen3.8-27b-fp8',
        input: 'Keep this.',
        max_output_tokens: 4,
      })
      const keys = await redis.keys(`${prefix}responses:*`)
      expect(keys).toHaveLength(1)
      expect(keys[0]).toContain(encodeURIComponent(first.id))
      expect(await redis.pttl(keys[0] as string)).toBeGreaterThan(24 * 3600 * 1000)
      const stored = JSON.parse((await redis.get(keys[0] as string)) ?? '{}')
      expect(stored.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
    } finally {
      await stack.close()
    }
  })
})
