import { createRedisQuotaStore } from '../../../control-plane/edge/redis-quota-store.ts'
import { createRedisQuotaLedgerReader } from '../../../control-plane/state/redis-quota-ledger-reader.ts'
import { describeQuotaLedgerReaderConformance } from '../../support/quota-ledger-reader-conformance.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

describeQuotaLedgerReaderConformance('redis', async () => {
  const prefix = uniquePrefix()
  const store = await createRedisQuotaStore({ redis, prefix })
  return { store, reader: createRedisQuotaLedgerReader(redis, prefix) }
})
