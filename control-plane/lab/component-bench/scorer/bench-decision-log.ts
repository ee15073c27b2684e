import { randomUUID } from 'node:crypto'
import { createMemoryStateStore } from '../../../../shared/state/memory-state-store.ts'
import type { StateStore } from '../../../../shared/state/state-store.ts'
import { connectRedis } from '../../../redis/connect-redis.ts'
import {
  createDecisionRecorder,
  type DecisionRecorder,
} from '../../../scorer/state/decision-recorder.ts'
import { createRedisStateStore } from '../../../state/redis-state-store.ts'
import { stateKeys } from '../../../state/state-keys.ts'

/**
 * The decision log the scorer benchmark writes to: Redis under a fresh prefix (deleted
 * at the end), as a scorer with REDIS_URL writes; in memory when Redis is unreachable.
 */
export async function benchDecisionLog(
  redisUrl: string,
  log: (line: string) => void,
): Promise<{ recorder: DecisionRecorder; where: string; close(): Promise<void> }> {
  const prefix = `kinf-bench:${randomUUID()}:`
  let store: StateStore
  let where = `redis ${redisUrl}`
  let cleanup = async () => {}
  try {
    const redis = await connectRedis(redisUrl, 'bench decision log')
    store = await createRedisStateStore({ redis, prefix })
    cleanup = async () => {
      await redis.del(stateKeys(prefix).decisions)
      await redis.quit()
    }
  } catch (error) {
    log(`decision log: redis unreachable (${(error as Error).message}); in memory\n`)
    store = createMemoryStateStore()
    where = 'memory'
  }
  const recorder = createDecisionRecorder({ store, flushMs: 100, maxBuffered: 50_000, log })
  return {
    recorder,
    where,
    async close() {
      await recorder.close()
      await cleanup()
    },
  }
}
