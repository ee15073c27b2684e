import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { expect } from 'vitest'
import {
  createRedisQuotaStore,
  type RedisQuotaStore,
} from '../../control-plane/edge/redis-quota-store.ts'
import type { EmbeddedStack } from '../../control-plane/lab/embedded/start-embedded.ts'
import type { QuotaLimits } from '../../shared/quota/quota-store.ts'
import { start } from './embedded-stack.ts'
import { redisUrl } from './redis-test-namespaces.ts'
import { runCli } from './run-cli.ts'

export interface EmbeddedOnRedis {
  stack: EmbeddedStack
  prefix: string
  /** `kinfctl inspect ARGS --prefix P` with REDIS_URL set, as a user runs it. */
  inspect(...args: string[]): ReturnType<typeof runCli>
  /** The same with `-o json`, expected to succeed, parsed. */
  inspectJson<T>(...args: string[]): Promise<T>
  /** Stops the stack and deletes its keys. */
  close(): Promise<void>
}

/**
 * The embedded default with REDIS_URL under a prefix of its own, the demo tenant's quotas
 * set to `tenantQuotas` (small ones show in the buckets before they refill), and its
 * quotas in Redis too: all its state is where `kinfctl inspect` reads it.
 */
export async function startEmbeddedOnRedis(
  redis: Redis,
  tenantQuotas: QuotaLimits,
): Promise<EmbeddedOnRedis> {
  const prefix = `kinf-test:${randomUUID()}:`
  const quotas: RedisQuotaStore = await createRedisQuotaStore({ redis: redisUrl, prefix })
  const stack = await start({
    redisUrl,
    redisPrefix: prefix,
    quotas,
    patch: (resource) => {
      if (resource.kind !== 'InferencePolicy') return
      for (const tenant of resource.spec.tenants)
        tenant.quotas = { failureMode: 'FailOpen', ...tenantQuotas }
    },
  }).catch(async (error: unknown) => {
    await quotas.close()
    throw error
  })
  const inspect = (...args: string[]) =>
    runCli(['inspect', ...args, '--prefix', prefix], '', { env: { REDIS_URL: redisUrl } })
  return {
    stack,
    prefix,
    inspect,
    async inspectJson<T>(...args: string[]) {
      const result = await inspect(...args, '-o', 'json')
      expect(result.stderr).toBe('')
      expect(result.code).toBe(0)
      return JSON.parse(result.stdout) as T
    },
    async close() {
      await stack.close()
      await quotas.close()
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.del(...keys)
    },
  }
}
