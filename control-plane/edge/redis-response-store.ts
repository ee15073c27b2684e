import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { ResponseStore } from '../../shared/openai/responses/response-store.ts'
import type { StoredConversation } from '../../shared/openai/responses/responses-request.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { clientOf } from '../redis/redis-client-option.ts'

/** Key of a tenant's stored response: the tenant is part of it, so no tenant reads another's. */
export function responseKey(prefix: string, tenant: string, id: string): string {
  return `${prefix}responses:${encodeURIComponent(tenant)}:${encodeURIComponent(id)}`
}

/**
 * The Responses API's stored conversations in Redis, shared by every edge replica: one
 * JSON string per response, expiring after its TTL (PX), so a conversation continues
 * whichever replica the next request reaches. A Redis that fails is a 503 for that
 * request, never a conversation silently started afresh.
 */
export async function createRedisResponseStore(options: {
  redis: Parameters<typeof clientOf>[0]
  prefix?: string
}): Promise<ResponseStore & { close(): Promise<void> }> {
  const { redis, release } = await clientOf(options.redis, 'redis response store')
  const prefix = options.prefix ?? defaultKeyPrefix
  const unavailable = (error: unknown) =>
    new KinfError(
      'upstream_unavailable',
      `the stored responses are unavailable: ${(error as Error).message}`,
    )
  return {
    async get(tenant, id) {
      const text = await redis.get(responseKey(prefix, tenant, id)).catch((error: unknown) => {
        throw unavailable(error)
      })
      return text === null ? null : (JSON.parse(text) as StoredConversation)
    },
    async put(tenant, id, conversation, ttlMs) {
      await redis
        .set(responseKey(prefix, tenant, id), JSON.stringify(conversation), 'PX', Math.ceil(ttlMs))
        .catch((error: unknown) => {
          throw unavailable(error)
        })
    },
    close: release,
  }
}
