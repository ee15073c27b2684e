import { createMemoryStateStore } from '../../../shared/state/memory-state-store.ts'
import { describeStateStoreConformance } from '../../support/state-store-conformance.ts'

describeStateStoreConformance('memory', async (options) => createMemoryStateStore(options))
