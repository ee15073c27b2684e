import { createMemoryQuotaStore } from '../../shared/quota/memory-quota-store.ts'
import type { QuotaStore } from '../../shared/quota/quota-store.ts'

/** One settlement the edge made: what it charged an account for one request. */
export interface Settlement {
  account: string
  estimatedTokens: number
  actualTokens: number
}

/**
 * The in-memory quota store, keeping a list of every settlement as the edge made it: what
 * a test compares with what the pods or the provider say they processed.
 */
export function recordingQuotaStore(): QuotaStore & {
  settlements: Settlement[]
  /** The accounts of the admissions made, in order. */
  admissions: string[]
} {
  const store = createMemoryQuotaStore()
  const settlements: Settlement[] = []
  const admissions: string[] = []
  return {
    settlements,
    admissions,
    admit(account, limits, estimated, nowMs) {
      admissions.push(account)
      return store.admit(account, limits, estimated, nowMs)
    },
    async settle(account, limits, reservation, estimatedTokens, actualTokens, nowMs) {
      settlements.push({ account, estimatedTokens, actualTokens })
      await store.settle(account, limits, reservation, estimatedTokens, actualTokens, nowMs)
    },
  }
}
