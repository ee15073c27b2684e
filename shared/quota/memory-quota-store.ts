import type { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
import type { QuotaLedgerReader } from '../state/quota-ledger-reader.ts'
import { admitBuckets, msUntilFull, settleBuckets } from './quota-ledger.ts'
import type { QuotaAdmission, QuotaLimits, QuotaStore } from './quota-store.ts'
import { PositiveCount, QuotaStoreOptions } from './quota-store-options.ts'
import type { QuotaBuckets } from './token-bucket.ts'

export const MemoryQuotaStoreOptions = QuotaStoreOptions.extend({
  maxOpenReservations: PositiveCount.default(10_000).describe(
    'Open reservations kept per tenant; beyond it the oldest is forgotten',
  ),
  sweepEvery: PositiveCount.default(1_024).describe(
    'Operations between sweeps that forget idle tenants',
  ),
})
export type MemoryQuotaStoreOptions = z.infer<typeof MemoryQuotaStoreOptions>
export type MemoryQuotaStoreOptionsInput = z.input<typeof MemoryQuotaStoreOptions>

interface TenantLedger {
  buckets: QuotaBuckets
  limits: QuotaLimits
  /** Reservation -> estimate and expiry, in the order made (so nearly in expiry order). */
  reservations: Map<string, { estimatedTokens: number; expiresMs: number }>
}

/**
 * The quota ledger of one Node process (the embedded default). Memory stays bounded:
 * reservations expire, their number per tenant is capped, and a tenant whose buckets are
 * full again with nothing open is forgotten (a fresh state is the same thing).
 */
/** The ledger of one process, whose buckets the status page and inspect can read. */
export interface MemoryQuotaStore extends QuotaStore, QuotaLedgerReader {}

export function createMemoryQuotaStore(input: MemoryQuotaStoreOptionsInput = {}): MemoryQuotaStore {
  const options = parseOptions(MemoryQuotaStoreOptions, input, 'memory quota store')
  const { reservationTtlMs: ttlMs, maxOpenReservations: maxOpen, sweepEvery } = options
  const tenants = new Map<string, TenantLedger>()
  let counter = 0
  let operations = 0

  function ledgerOf(tenant: string, limits: QuotaLimits, nowMs: number): TenantLedger {
    if (++operations % sweepEvery === 0) sweep(nowMs)
    let ledger = tenants.get(tenant)
    if (ledger === undefined) {
      ledger = { buckets: {}, limits, reservations: new Map() }
      tenants.set(tenant, ledger)
    }
    ledger.limits = limits
    expire(ledger, nowMs)
    return ledger
  }

  function expire(ledger: TenantLedger, nowMs: number): void {
    for (const [id, reservation] of ledger.reservations) {
      if (reservation.expiresMs > nowMs) break
      ledger.reservations.delete(id)
    }
  }

  function sweep(nowMs: number): void {
    for (const [tenant, ledger] of tenants) {
      expire(ledger, nowMs)
      if (ledger.reservations.size === 0 && msUntilFull(ledger.buckets, ledger.limits, nowMs) === 0)
        tenants.delete(tenant)
    }
  }

  return {
    async buckets(accounts) {
      return accounts.map((account) => {
        const buckets = tenants.get(account)?.buckets
        return buckets && (buckets.requests || buckets.tokens) ? structuredClone(buckets) : null
      })
    },

    async admit(tenant, limits, estimatedTokens, nowMs): Promise<QuotaAdmission> {
      const ledger = ledgerOf(tenant, limits, nowMs)
      const result = admitBuckets(ledger.buckets, limits, estimatedTokens, nowMs)
      if (!result.admitted) return result
      ledger.buckets = result.buckets
      const reservation = `m${++counter}`
      // Without a tokens limit there is nothing to correct, so nothing to remember.
      if (limits.tokensPerMinute !== undefined) {
        if (ledger.reservations.size >= maxOpen) {
          const oldest = ledger.reservations.keys().next().value
          if (oldest !== undefined) ledger.reservations.delete(oldest)
        }
        ledger.reservations.set(reservation, { estimatedTokens, expiresMs: nowMs + ttlMs })
      }
      return { admitted: true, reservation }
    },

    async settle(tenant, limits, reservation, _estimatedTokens, actualTokens, nowMs) {
      const ledger = ledgerOf(tenant, limits, nowMs)
      const open = ledger.reservations.get(reservation)
      if (open === undefined) return
      // The estimate recorded at admission is what was taken from the bucket.
      ledger.buckets = settleBuckets(
        ledger.buckets,
        limits,
        open.estimatedTokens,
        actualTokens,
        nowMs,
      )
      ledger.reservations.delete(reservation)
    },
  }
}
