import type { StoredConversation } from './responses-request.ts'

/**
 * Where the edge keeps the conversations `previous_response_id` continues, per tenant: a
 * tenant can continue only its own responses. In Redis for the Node edge's replicas
 * (control-plane/edge/redis-response-store.ts), in memory otherwise (one isolate's).
 */
export interface ResponseStore {
  get(tenant: string, id: string): Promise<StoredConversation | null>
  /** Keeps `conversation` as response `id` of `tenant` for `ttlMs`. */
  put(tenant: string, id: string, conversation: StoredConversation, ttlMs: number): Promise<void>
}

/** How long a stored response can be continued unless configured: OpenAI keeps 30 days. */
export const defaultResponseTtlMs = 30 * 24 * 3600 * 1000

/**
 * A ResponseStore in this process's memory, bounded: past `maxEntries` the oldest entry
 * goes first, and an expired one is never returned.
 */
export function createMemoryResponseStore(options: {
  nowMs: () => number
  maxEntries?: number
}): ResponseStore {
  const entries = new Map<string, { conversation: StoredConversation; expiresAtMs: number }>()
  const max = options.maxEntries ?? 10_000
  const key = (tenant: string, id: string) => `${tenant}\u0000${id}`
  return {
    async get(tenant, id) {
      const entry = entries.get(key(tenant, id))
      if (!entry) return null
      if (entry.expiresAtMs <= options.nowMs()) {
        entries.delete(key(tenant, id))
        return null
      }
      return structuredClone(entry.conversation)
    },
    async put(tenant, id, conversation, ttlMs) {
      entries.delete(key(tenant, id))
      entries.set(key(tenant, id), {
        conversation: structuredClone(conversation),
        expiresAtMs: options.nowMs() + ttlMs,
      })
      while (entries.size > max) entries.delete(entries.keys().next().value as string)
    },
  }
}
