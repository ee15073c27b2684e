import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import { describeQuotaLedgerReaderConformance } from '../../support/quota-ledger-reader-conformance.ts'

describeQuotaLedgerReaderConformance('memory', async () => {
  const store = createMemoryQuotaStore()
  return { store, reader: store }
})
