import { afterAll, beforeAll } from 'vitest'
import { createMemoryQuotaStore } from '../../shared/quota/memory-quota-store.ts'
import { describeEdgeRequestPath } from '../support/edge-request-path-suite.ts'
import { type RequestPathStack, startRequestPathStack } from '../support/request-path-stack.ts'

// The same suite runs inside workerd: edge-request-path.workers.test.ts.
let started: Awaited<ReturnType<typeof startRequestPathStack>>
beforeAll(async () => {
  started = await startRequestPathStack()
})
afterAll(() => started.close())

describeEdgeRequestPath('Node', {
  stack: (): RequestPathStack => started.stack,
  quotas: () => createMemoryQuotaStore(),
})
