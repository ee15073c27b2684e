import type { Redis } from 'ioredis'
import { z } from 'zod'
import { connectRedis } from './connect-redis.ts'

/** A connected client (close() leaves it open), or a URL to connect to (close() quits it). */
export const RedisClientOption = z
  .union([z.string(), z.custom<Redis>((value) => typeof value === 'object' && value !== null)], {
    error: 'must be a Redis client or a URL',
  })
  .describe(
    'A connected client (close() leaves it open), or a URL to connect to (close() quits it)',
  )

/** The client a RedisClientOption gives, and how to let go of it (quit only one made here). */
export async function clientOf(
  option: Redis | string,
  what: string,
): Promise<{ redis: Redis; release(): Promise<void> }> {
  if (typeof option !== 'string') return { redis: option, release: async () => {} }
  const redis = await connectRedis(option, what)
  return {
    redis,
    release: async () => {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
