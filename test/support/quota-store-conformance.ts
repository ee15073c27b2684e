import { describe, expect, it } from 'vitest'
import type { QuotaAdmission, QuotaLimits, QuotaStore } from '../../shared/quota/quota-store.ts'

const t0 = 1_800_000_000_000
let tenants = 0

/** A tenant no other test (or earlier run against a shared backend) has touched. */
function freshTenant(): string {
  return `tenant-${++tenants}-${Math.floor(Math.random() * 1e9).toString(36)}`
}

function reservationOf(admission: QuotaAdmission): string {
  if (!admission.admitted) throw new Error(`refused: ${admission.message}`)
  return admission.reservation
}

/**
 * The semantics every QuotaStore shares (memory, Redis, Durable Object), with passed-in
 * clocks: two token buckets per tenant, capacity = the per-minute limit, refilled at
 * limit/60 per second.
 */
export function describeQuotaStoreConformance(
  name: string,
  create: () => QuotaStore | Promise<QuotaStore>,
): void {
  describe(`${name} quota store`, () => {
    it('admits everything when the tenant has no limits', async () => {
      const store = await create()
      const tenant = freshTenant()
      for (let i = 0; i < 50; i++) {
        const admission = await store.admit(tenant, {}, 1_000_000, t0)
        expect(admission.admitted).toBe(true)
        await store.settle(tenant, {}, reservationOf(admission), 1_000_000, 2_000_000, t0)
      }
    })

    it('admits exactly the limit out of a concurrent burst', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { requestsPerMinute: 5 }
      const results = await Promise.all(
        Array.from({ length: 20 }, () => store.admit(tenant, limits, 10, t0)),
      )
      expect(results.filter((r) => r.admitted)).toHaveLength(5)
      const refused = results.filter((r) => !r.admitted)
      expect(refused).toHaveLength(15)
      for (const r of refused) {
        // One request refills every 12 s.
        expect(r).toMatchObject({ admitted: false, limit: 'requests', retryAfterSeconds: 12 })
      }
      const reservations = results.flatMap((r) => (r.admitted ? [r.reservation] : []))
      expect(new Set(reservations).size).toBe(5)
    })

    it('admits exactly the tokens a concurrent burst fits into', async () => {
      const store = await create()
      const tenant = freshTenant()
      const results = await Promise.all(
        Array.from({ length: 12 }, () => store.admit(tenant, { tokensPerMinute: 1_000 }, 100, t0)),
      )
      expect(results.filter((r) => r.admitted)).toHaveLength(10)
      expect(results.find((r) => !r.admitted)).toMatchObject({ limit: 'tokens' })
    })

    it('refills continuously over the passed-in time', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { requestsPerMinute: 6 } // one every 10 s
      for (let i = 0; i < 6; i++)
        expect((await store.admit(tenant, limits, 0, t0)).admitted).toBe(true)
      expect(await store.admit(tenant, limits, 0, t0 + 9_000)).toMatchObject({
        admitted: false,
        retryAfterSeconds: 1,
      })
      expect((await store.admit(tenant, limits, 0, t0 + 10_000)).admitted).toBe(true)
      expect((await store.admit(tenant, limits, 0, t0 + 10_000)).admitted).toBe(false)
      // A long pause refills to capacity, never beyond it.
      const later = t0 + 3_600_000
      const burst = []
      for (let i = 0; i < 8; i++) burst.push((await store.admit(tenant, limits, 0, later)).admitted)
      expect(burst.filter(Boolean)).toHaveLength(6)
    })

    it('tells when to retry: the time until enough has refilled, rounded up, at least 1 s', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { tokensPerMinute: 600 } // 10 tokens a second
      reservationOf(await store.admit(tenant, limits, 600, t0))
      const fifty = await store.admit(tenant, limits, 50, t0)
      expect(fifty).toMatchObject({ admitted: false, limit: 'tokens', retryAfterSeconds: 5 })
      expect(await store.admit(tenant, limits, 55, t0)).toMatchObject({ retryAfterSeconds: 6 })
      expect(await store.admit(tenant, limits, 1, t0)).toMatchObject({ retryAfterSeconds: 1 })
      if (!fifty.admitted) expect(fifty.message).toMatch(/600 tokens per minute.*retry in 5 s/)
      // A refusal reserves nothing: after 5 s the 50 tokens are there.
      expect((await store.admit(tenant, limits, 50, t0 + 5_000)).admitted).toBe(true)
    })

    it('reports the limit that is further from allowing the request', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { requestsPerMinute: 60, tokensPerMinute: 60 } // 1 a second each
      reservationOf(await store.admit(tenant, limits, 60, t0))
      expect(await store.admit(tenant, limits, 30, t0)).toMatchObject({
        admitted: false,
        limit: 'tokens',
        retryAfterSeconds: 30,
      })
    })

    it('refunds what a request did not use', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { tokensPerMinute: 1_000 }
      const first = reservationOf(await store.admit(tenant, limits, 800, t0))
      expect((await store.admit(tenant, limits, 300, t0)).admitted).toBe(false)
      await store.settle(tenant, limits, first, 800, 100, t0)
      expect((await store.admit(tenant, limits, 300, t0)).admitted).toBe(true)
      expect((await store.admit(tenant, limits, 600, t0)).admitted).toBe(true)
      expect((await store.admit(tenant, limits, 1, t0)).admitted).toBe(false)
    })

    it('charges usage beyond the estimate as debt', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { tokensPerMinute: 600 }
      const reservation = reservationOf(await store.admit(tenant, limits, 100, t0))
      await store.settle(tenant, limits, reservation, 100, 700, t0) // level 600 - 700 = -100
      // One token needs 101 refilled at 10 a second: 10.1 s.
      expect(await store.admit(tenant, limits, 1, t0)).toMatchObject({ retryAfterSeconds: 11 })
      expect((await store.admit(tenant, limits, 1, t0 + 10_100)).admitted).toBe(true)
    })

    it('admits a request larger than the whole quota only from a full bucket', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { tokensPerMinute: 100 }
      reservationOf(await store.admit(tenant, limits, 250, t0)) // level -150
      const again = await store.admit(tenant, limits, 250, t0)
      // Full again after 250 tokens at 100 a minute: 150 s.
      expect(again).toMatchObject({ admitted: false, limit: 'tokens', retryAfterSeconds: 150 })
      if (!again.admitted) expect(again.message).toMatch(/exceed the quota of 100 tokens/)
      expect((await store.admit(tenant, limits, 250, t0 + 149_000)).admitted).toBe(false)
      expect((await store.admit(tenant, limits, 250, t0 + 150_000)).admitted).toBe(true)
    })

    it('ignores a second settle and an unknown reservation', async () => {
      const store = await create()
      const tenant = freshTenant()
      const limits = { tokensPerMinute: 1_000 }
      const reservation = reservationOf(await store.admit(tenant, limits, 900, t0))
      await store.settle(tenant, limits, reservation, 900, 400, t0) // refund 500: level 600
      await store.settle(tenant, limits, reservation, 900, 400, t0) // ignored
      await store.settle(tenant, limits, 'no-such-reservation', 900, 0, t0) // ignored
      await store.settle(freshTenant(), limits, reservation, 900, 0, t0) // another tenant's: ignored
      expect((await store.admit(tenant, limits, 600, t0)).admitted).toBe(true)
      expect((await store.admit(tenant, limits, 1, t0)).admitted).toBe(false)
    })

    it('keeps tenants independent', async () => {
      const store = await create()
      const [a, b] = [freshTenant(), freshTenant()]
      const limits: QuotaLimits = { requestsPerMinute: 2, tokensPerMinute: 100 }
      reservationOf(await store.admit(a, limits, 100, t0))
      expect((await store.admit(a, limits, 1, t0)).admitted).toBe(false)
      expect((await store.admit(b, limits, 100, t0)).admitted).toBe(true)
      expect((await store.admit(b, { requestsPerMinute: 2 }, 0, t0)).admitted).toBe(true)
      expect((await store.admit(b, { requestsPerMinute: 2 }, 0, t0)).admitted).toBe(false)
    })

    it('refuses bad numbers with a clear error', async () => {
      const store = await create()
      const tenant = freshTenant()
      await expect(store.admit(tenant, { tokensPerMinute: 10 }, -1, t0)).rejects.toThrow(
        /estimatedTokens must be a non-negative integer/,
      )
      await expect(store.admit(tenant, { tokensPerMinute: 10 }, 1.5, t0)).rejects.toThrow(
        /estimatedTokens/,
      )
    })
  })
}
