import { Redis } from 'ioredis'
import { afterAll, describe } from 'vitest'
import { createRedisResponseStore } from '../../../control-plane/edge/redis-response-store.ts'
import { redisUrl } from '../../support/redis-test-namespaces.ts'
import { responseStoreConformance } from '../../support/response-store-conformance.ts'

const redis = new Redis(redisUrl)
afterAll(() => redis.quit())

describe('the Redis response store (a real Redis)', () => {
  const prefix = `kinf-test-responses-${process.pid}-${Date.now()}:`
  responseStoreConformance(
    async () => createRedisResponseStore({ redis, prefix }),
    (_clock, ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  )
})
