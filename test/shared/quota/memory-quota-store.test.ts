import { describe, expect, it } from 'vitest'
import {
  createMemoryQuotaStore,
  type MemoryQuotaStoreOptionsInput,
} from '../../../shared/quota/memory-quota-store.ts'
import { describeQuotaStoreConformance } from '../../support/quota-store-conformance.ts'

describeQuotaStoreConformance('memory', () => createMemoryQuotaStore())

const t0 = 1_800_000_000_000
const limits = { tokensPerMinute: 1_000 }

describe('memory quota store', () => {
  it('forgets reservations left unsettled past their expiry', async () => {
    const store = createMemoryQuotaStore({ reservationTtlMs: 60_000 })
    const first = await store.admit('a', limits, 1_000, t0)
    if (!first.admitted) throw new Error('refused')
    // After the expiry the settle is ignored: the full estimate stays charged.
    await store.settle('a', limits, first.reservation, 1_000, 0, t0 + 60_000)
    expect((await store.admit('a', limits, 1_000, t0 + 60_000)).admitted).toBe(true)
    expect((await store.admit('a', limits, 1, t0 + 60_000)).admitted).toBe(false)
  })

  it('keeps at most maxOpenReservations per tenant, forgetting the oldest', async () => {
    const store = createMemoryQuotaStore({ maxOpenReservations: 2 })
    const reservations: string[] = []
    for (let i = 0; i < 3; i++) {
      const admission = await store.admit('a', limits, 300, t0)
      if (!admission.admitted) throw new Error('refused')
      reservations.push(admission.reservation)
    }
    // Level 100. The oldest reservation is gone: settling it refunds nothing.
    await store.settle('a', limits, reservations[0] as string, 300, 0, t0)
    expect((await store.admit('a', limits, 101, t0)).admitted).toBe(false)
    await store.settle('a', limits, reservations[2] as string, 300, 0, t0)
    expect((await store.admit('a', limits, 400, t0)).admitted).toBe(true)
  })

  it('rejects bad options', () => {
    expect(() => createMemoryQuotaStore({ reservationTtlMs: 0 })).toThrow(/reservationTtlMs/)
    const cases: [MemoryQuotaStoreOptionsInput, string][] = [
      [{ reservationTtlMs: 0 }, 'memory quota store: reservationTtlMs must be a positive integer'],
      [
        { maxOpenReservations: 1.5 },
        'memory quota store: maxOpenReservations must be a positive integer',
      ],
      [{ sweepEvery: Number.NaN }, 'memory quota store: sweepEvery must be a positive integer'],
      [{ sweepEvry: 5 } as never, 'memory quota store: Unrecognized key: "sweepEvry"'],
    ]
    for (const [options, message] of cases) {
      expect(() => createMemoryQuotaStore(options)).toThrow(
        expect.objectContaining({ code: 'invalid_config', message }),
      )
    }
  })
})
