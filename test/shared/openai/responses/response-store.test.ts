import { describe } from 'vitest'
import { createMemoryResponseStore } from '../../../../shared/openai/responses/response-store.ts'
import { responseStoreConformance } from '../../../support/response-store-conformance.ts'

describe('the in-memory response store', () => {
  responseStoreConformance(async (clock) => createMemoryResponseStore({ nowMs: () => clock.nowMs }))
})
