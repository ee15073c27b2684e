import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, afterEach } from 'vitest'

export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Where a scorer under test keeps its KV index. */
export type IndexKind = 'memory' | 'redis'

export interface RedisTestNamespaces {
  redis: Redis
  uniquePrefix: () => string
  /** A scorer's index options for `kind`: none in memory, else Redis under a fresh namespace. */
  indexOptions: (kind: IndexKind) => { redisUrl?: string; redisPrefix?: string }
}

/**
 * A Redis client for the test file (connecting on its first command) and fresh key
 * namespaces, each deleted after the test that made it: the real Redis on 127.0.0.1:6379
 * is shared by every suite.
 */
export function useRedisTestNamespaces(): RedisTestNamespaces {
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
  const uniquePrefix = () => {
    const prefix = `kinf-test:${randomUUID()}:`
    prefixes.push(prefix)
    return prefix
  }
  return {
    redis,
    uniquePrefix,
    indexOptions: (kind) => (kind === 'redis' ? { redisUrl, redisPrefix: uniquePrefix() } : {}),
  }
}
