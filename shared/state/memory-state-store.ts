import { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
import { compareEntryIds, type StoredDecisionEntry } from './decision-entry.ts'
import type { ReplicaPodViews } from './pod-state.ts'
import type { StateStore } from './state-store.ts'

export const MemoryStateStoreOptions = z.strictObject({
  maxDecisions: z
    .int()
    .min(1)
    .default(10_000)
    .describe('Decision log entries kept (oldest first out)'),
})
export type MemoryStateStoreOptionsInput = z.input<typeof MemoryStateStoreOptions>

/**
 * The state of one process (the embedded default without Redis, tests): the same
 * semantics as the Redis store. Log ids are `ms-seq` of the entries' own times, never
 * going back, as Redis makes them.
 */
export function createMemoryStateStore(input: MemoryStateStoreOptionsInput = {}): StateStore {
  const { maxDecisions } = parseOptions(MemoryStateStoreOptions, input, 'memory state store')
  const views = new Map<string, { views: ReplicaPodViews; expiresAtMs: number }>()
  const log: StoredDecisionEntry[] = []
  let lastMs = 0
  let seq = 0

  return {
    async writePodViews(written, ttlMs) {
      views.set(written.replica, {
        views: structuredClone(written),
        expiresAtMs: written.writtenAtMs + ttlMs,
      })
    },

    async readPodViews(nowMs) {
      for (const [replica, held] of views) if (held.expiresAtMs <= nowMs) views.delete(replica)
      return [...views.values()].map((held) => structuredClone(held.views))
    },

    async appendDecisions(entries) {
      for (const entry of entries) {
        const ms = Math.max(lastMs, Math.floor(entry.atMs))
        seq = ms === lastMs ? seq + 1 : 0
        lastMs = ms
        log.push({ id: `${ms}-${seq}`, entry: structuredClone(entry) })
      }
      if (log.length > maxDecisions) log.splice(0, log.length - maxDecisions)
    },

    async readDecisions(query) {
      const { sinceMs, afterId, count = 1_000 } = query
      const matching = log.filter(
        ({ id }) =>
          (sinceMs === undefined || compareEntryIds(id, `${Math.floor(sinceMs)}-0`) >= 0) &&
          (afterId === undefined || compareEntryIds(id, afterId) > 0),
      )
      return structuredClone(matching.slice(-count))
    },

    async close() {},
  }
}
