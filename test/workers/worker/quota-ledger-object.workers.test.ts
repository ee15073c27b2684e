import { evictDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import {
  createDurableObjectQuotaStore,
  type QuotaLedgerNamespace,
} from '../../../workers/worker/durable-object-quota-store.ts'
import { describeQuotaStoreConformance } from '../../support/quota-store-conformance.ts'

// Runs in workerd with wrangler.toml's bindings (the workers project of vitest.config.ts).
const namespace = env.QUOTA_LEDGER as QuotaLedgerNamespace

describeQuotaStoreConformance('durable object', () => createDurableObjectQuotaStore(namespace))

const t0 = 1_800_000_000_000
const store = createDurableObjectQuotaStore(namespace)

describe('QuotaLedgerObject', () => {
  it('keeps the ledger and open reservations across eviction', async () => {
    const tenant = 'evicted'
    const limits = { requestsPerMinute: 2, tokensPerMinute: 1_000 }
    const first = await store.admit(tenant, limits, 900, t0)
    if (!first.admitted) throw new Error(first.message)
    await evictDurableObject(namespace.get(namespace.idFromName(tenant)))
    // Still charged after the restart: 100 tokens left.
    expect(await store.admit(tenant, limits, 200, t0)).toMatchObject({ admitted: false })
    // The reservation survived too: settling it refunds 800.
    await store.settle(tenant, limits, first.reservation, 900, 100, t0)
    await evictDurableObject(namespace.get(namespace.idFromName(tenant)))
    expect((await store.admit(tenant, limits, 800, t0)).admitted).toBe(true)
    // Two requests per minute, both used.
    expect(await store.admit(tenant, limits, 0, t0)).toMatchObject({ limit: 'requests' })
  })

  it('answers each admission with the buckets it left, for the x-ratelimit-* headers', async () => {
    const tenant = 'headers'
    const limits = { requestsPerMinute: 3, tokensPerMinute: 1_000 }
    expect(await store.admit(tenant, limits, 400, t0)).toMatchObject({
      admitted: true,
      state: { requests: { level: 2, updatedMs: t0 }, tokens: { level: 600, updatedMs: t0 } },
    })
    // A refusal carries the buckets as they stand (unchanged by it).
    expect(await store.admit(tenant, limits, 700, t0)).toMatchObject({
      admitted: false,
      state: { requests: { level: 2 }, tokens: { level: 600 } },
    })
  })

  it('refuses malformed input with a clear error, before and after the RPC', async () => {
    await expect(store.admit('bad-input', { requestsPerMinute: -1 }, 1, t0)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/quota limits: .*requestsPerMinute/s),
    })
    // A caller that skips the store still gets the object's own checks.
    const stub = namespace.get(namespace.idFromName('bad-input'))
    expect(await stub.admit({ tokensPerMinute: 0 }, 1, t0)).toEqual({
      invalid: expect.stringMatching(/tokensPerMinute/),
    })
    expect(await stub.admit({}, -5, t0)).toEqual({
      invalid: expect.stringMatching(/estimatedTokens/),
    })
    expect(await stub.settle({ tokensPerMinute: -2 }, 'r', 1, t0)).toEqual({
      invalid: expect.stringMatching(/tokensPerMinute/),
    })
  })

  it('forgets a reservation left unsettled for ten minutes', async () => {
    const tenant = 'expiry'
    const limits = { tokensPerMinute: 1_000 }
    const admission = await store.admit(tenant, limits, 1_000, t0)
    if (!admission.admitted) throw new Error(admission.message)
    const later = t0 + 600_000
    await store.settle(tenant, limits, admission.reservation, 1_000, 0, later)
    // Refilled by time alone (a full bucket), but the late settle refunded nothing extra:
    expect((await store.admit(tenant, limits, 1_000, later)).admitted).toBe(true)
    expect((await store.admit(tenant, limits, 1, later)).admitted).toBe(false)
  })
})
