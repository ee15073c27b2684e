import { env } from 'cloudflare:workers'
import type { QuotaLedgerNamespace } from '../../workers/worker/durable-object-quota-store.ts'
import { createDurableObjectQuotaStore } from '../../workers/worker/durable-object-quota-store.ts'
import { describeEdgeRequestPath } from '../support/edge-request-path-suite.ts'
import type { RequestPathStack } from '../support/request-path-stack.ts'

// Runs in workerd; the pods, scorers and Bedrock stand-in were started in Node by the
// workers project's global setup and reach this Worker as a binding.
const stack = JSON.parse(env.REQUEST_PATH_STACK as string) as RequestPathStack
const namespace = env.QUOTA_LEDGER as QuotaLedgerNamespace
let quotaStores = 0

describeEdgeRequestPath('workerd', {
  stack: () => stack,
  // One Durable Object per tenant: a fresh store is a fresh namespace of tenant names.
  quotas: () => {
    const prefix = `run${quotaStores++}-${crypto.randomUUID()}:`
    const store = createDurableObjectQuotaStore(namespace)
    return {
      admit: (tenant, ...rest) => store.admit(prefix + tenant, ...rest),
      settle: (tenant, ...rest) => store.settle(prefix + tenant, ...rest),
    }
  },
})
