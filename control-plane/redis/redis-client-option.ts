import type { Redis } from 'ioredis'
import { z } from 'zod'

/** A connected client (close() leaves it open), or a URL to connect to (close() quits it). */
export const RedisClientOption = z
  .union([z.string(), z.custom<Redis>((value) => typeof value === 'object' && value !== null)], {
    error: 'must be a Redis client or a URL',
  })
  .describe(
    'A connected client (close() leaves it open), or a URL to connect to (close() quits it)',
  )
