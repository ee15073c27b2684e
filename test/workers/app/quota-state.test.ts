import { describe, expect, it } from 'vitest'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { QuotaStore } from '../../../shared/quota/quota-store.ts'
import { admitQuota, type QuotaDeps, quotaState } from '../../../workers/app/admit-quota.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'

const quotas = { requestsPerMinute: 10, tokensPerMinute: 1_000 }
const deps = (store: QuotaStore, extra: Partial<QuotaDeps> = {}): QuotaDeps => ({
  quotas: store,
  metrics: createEdgeMetrics(),
  nowMs: () => 0,
  log: () => {},
  ...extra,
})
/** A store whose buckets cannot be read (as Redis's and the Durable Object's). */
const opaque = (store: QuotaStore): QuotaStore => ({
  admit: (...args) => store.admit(...args),
  settle: (...args) => store.settle(...args),
})

describe('quotaState, for the rate-limit headers', () => {
  it('reads the buckets after admission from a store that can be read', async () => {
    const edge = deps(createMemoryQuotaStore())
    const admission = await admitQuota(edge, 'acme', quotas, 100)
    expect(await quotaState(edge, 'acme', admission)).toEqual({
      requests: { level: 9, updatedMs: 0 },
      tokens: { level: 900, updatedMs: 0 },
    })
  })

  it('reads them through quotaReader when the store cannot, and else knows nothing', async () => {
    const shared = createMemoryQuotaStore()
    const admission = await admitQuota(deps(opaque(shared)), 'acme', quotas, 100)
    expect(await quotaState(deps(opaque(shared)), 'acme', admission)).toBeNull()
    const read = await quotaState(deps(opaque(shared), { quotaReader: shared }), 'acme', admission)
    expect(read?.requests?.level).toBe(9)
  })

  it('reads this edge’s own bucket for a FailOpen admission', async () => {
    const failing: QuotaStore = {
      admit: async () => {
        throw new Error('store down')
      },
      settle: async () => {},
    }
    const edge = deps(failing)
    const admission = await admitQuota(edge, 'acme', { ...quotas, failureMode: 'FailOpen' }, 50)
    expect(admission.admitted).toBe(true)
    expect((await quotaState(edge, 'acme', admission))?.tokens?.level).toBe(950)
  })

  it('knows nothing of an account without limits', async () => {
    const edge = deps(createMemoryQuotaStore())
    const admission = await admitQuota(edge, 'free', {}, 50)
    expect(await quotaState(edge, 'free', admission)).toBeNull()
  })
})
