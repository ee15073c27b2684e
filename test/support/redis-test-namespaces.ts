import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, afterEach } from 'vitest'

export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * A Redis client for the test file (connecting on its first command) and fresh key
 * namespaces, each deleted after the test that made it: the real Redis on 127.0.0.1:6379
 * is shared by every suite.
 */
export function useRedisTestNamespaces(): { redis: Redis; uniquePrefix: () => string } {
  const redis = new Redis(redisUrl, { lazyConnect: true })
  const prefixes: string[] = []
  afterEach(async () => {
    for (const prefix of prefixes.splice(0)) {
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.del(...keys)
    }
  })
  afterAll(async () => {
    await redis.quit()
  })
  return {
    redis,
    uniquePrefix: () => {
      const prefix = `kinf-test:${randomUUID()}:`
      prefixes.push(prefix)
      return prefix
    },
  }
}
