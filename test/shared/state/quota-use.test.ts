import { describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { quotaAccountsOf, quotaUseOf } from '../../../shared/state/quota-use.ts'
import { snapshotChanges } from '../../../shared/state/snapshot-changes.ts'

const snapshot = {
  pools: { 'ns/p': { spec: { a: 1 } } },
  workerSets: {},
  backends: {},
  endpoints: {},
  tenants: { acme: 'ns/pol', free: 'ns/pol' },
  policies: {
    'ns/pol': {
      spec: {
        tenants: [
          { name: 'acme', quotas: { requestsPerMinute: 60, tokensPerMinute: 6_000 } },
          { name: 'free' },
        ],
      },
    },
  },
  providers: {
    'ns/bedrock': { spec: { limits: { requestsPerMinute: 120 } } },
    'ns/unlimited': { spec: {} },
  },
} as unknown as ConfigSnapshot

describe('quotaUseOf', () => {
  it('lists tenants and limited provider accounts, buckets refilled to now', () => {
    const accounts = quotaAccountsOf(snapshot)
    expect(accounts.map((a) => [a.account, a.kind, a.owner])).toEqual([
      ['acme', 'tenant', 'ns/pol'],
      ['free', 'tenant', 'ns/pol'],
      ['provider:ns/bedrock', 'provider', 'ns/bedrock'],
    ])
    const t0 = 1_000_000
    const use = quotaUseOf(
      accounts,
      [
        { requests: { level: 10, updatedMs: t0 }, tokens: { level: -600, updatedMs: t0 } },
        null,
        null,
      ],
      t0 + 10_000,
    )
    // 10 s refill 10 requests (60/min) and 1,000 tokens (6,000/min).
    expect(use[0]).toMatchObject({
      requests: { available: 20, capacity: 60 },
      tokens: { available: 400, capacity: 6_000 },
      untouched: false,
    })
    expect(use[1]).toMatchObject({ requests: null, tokens: null, untouched: true })
    expect(use[2]).toMatchObject({ requests: { available: 120, capacity: 120 }, tokens: null })
  })
})

describe('snapshotChanges', () => {
  it('lists what was added, removed and changed by section and id', () => {
    const after = structuredClone(snapshot) as unknown as Record<string, Record<string, unknown>>
    after.pools = { 'ns/p': { spec: { a: 2 } }, 'ns/q': {} }
    delete after.tenants?.free
    expect(snapshotChanges(snapshot, after as unknown as ConfigSnapshot)).toEqual([
      { section: 'pools', id: 'ns/p', change: 'changed' },
      { section: 'pools', id: 'ns/q', change: 'added' },
      { section: 'tenants', id: 'free', change: 'removed' },
    ])
    expect(snapshotChanges(snapshot, structuredClone(snapshot))).toEqual([])
  })
})
