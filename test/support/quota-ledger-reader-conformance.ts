import { describe, expect, it } from 'vitest'
import type { QuotaStore } from '../../shared/quota/quota-store.ts'
import type { QuotaLedgerReader } from '../../shared/state/quota-ledger-reader.ts'

const t0 = 1_800_000_000_000

/** Reading back a quota store's buckets (memory, Redis): what the ledger itself holds. */
export function describeQuotaLedgerReaderConformance(
  name: string,
  create: () => Promise<{ store: QuotaStore; reader: QuotaLedgerReader }>,
): void {
  describe(`${name} quota ledger reader`, () => {
    it('reads each account as charged, null for one never charged', async () => {
      const { store, reader } = await create()
      const tenant = `t-${Math.random().toString(36).slice(2)}`
      const admission = await store.admit(
        tenant,
        { requestsPerMinute: 10, tokensPerMinute: 1_000 },
        300,
        t0,
      )
      expect(admission.admitted).toBe(true)
      const [charged, never] = await reader.buckets([tenant, `${tenant}-never`])
      expect(charged).toEqual({
        requests: { level: 9, updatedMs: t0 },
        tokens: { level: 700, updatedMs: t0 },
      })
      expect(never).toBeNull()
      expect(await reader.buckets([])).toEqual([])
    })
  })
}
