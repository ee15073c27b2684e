import type { QuotaBuckets } from '../quota/token-bucket.ts'

/**
 * Reads the quota ledgers' buckets as stored, without touching them: tenants by name,
 * provider accounts as `provider:<namespace>/<name>` (see workers/app/provider-budget.ts).
 */
export interface QuotaLedgerReader {
  /** Each account's buckets, aligned with `accounts`; null for one never charged (full). */
  buckets(accounts: readonly string[]): Promise<(QuotaBuckets | null)[]>
}
