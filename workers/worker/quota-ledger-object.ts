import { DurableObject } from 'cloudflare:workers'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { admitBuckets, settleBuckets } from '../../shared/quota/quota-ledger.ts'
import {
  parseQuotaLimits,
  type QuotaAdmission,
  type QuotaLimits,
} from '../../shared/quota/quota-store.ts'
import { QuotaStoreOptions } from '../../shared/quota/quota-store-options.ts'
import type { QuotaBuckets } from '../../shared/quota/token-bucket.ts'

/** How long an unsettled reservation can still be settled: as long as in every quota store. */
const { reservationTtlMs } = QuotaStoreOptions.parse({})
/** Open reservations kept; beyond it the oldest is forgotten (its estimate stays charged). */
const maxOpenReservations = 10_000

/**
 * One tenant's quota ledger (the namespace is addressed with idFromName(tenant)). A Durable
 * Object runs one call at a time and every call here is synchronous SQLite work, so each
 * admit and settle is atomic and strongly consistent; the state lives in the object's
 * SQLite storage and survives eviction. Semantics: shared/quota/quota-ledger.ts.
 */
export class QuotaLedgerObject extends DurableObject<unknown> {
  private schemaReady = false

  /**
   * Malformed input from a caller that skipped the store's checks comes back as
   * `{ invalid }`: a value, because an exception thrown across RPC is also logged by the
   * runtime as an uncaught error in the object.
   */
  admit(limits: QuotaLimits, estimatedTokens: number, nowMs: number): QuotaAdmission | Invalid {
    return invalidAsValue(() => this.admitChecked(limits, estimatedTokens, nowMs))
  }

  settle(
    limits: QuotaLimits,
    reservation: string,
    actualTokens: number,
    nowMs: number,
  ): Invalid | null {
    return invalidAsValue(() => {
      this.settleChecked(limits, reservation, actualTokens, nowMs)
      return null
    })
  }

  private admitChecked(
    limits: QuotaLimits,
    estimatedTokens: number,
    nowMs: number,
  ): QuotaAdmission {
    const checked = parseQuotaLimits(limits)
    this.prepare(nowMs)
    const current = this.readBuckets()
    const result = admitBuckets(current, checked, estimatedTokens, nowMs)
    // The buckets go back with the answer, for the rate-limit headers (QuotaAdmission.state).
    if (!result.admitted) return { ...result, state: current }
    this.writeBuckets(result.buckets)
    const reservation = crypto.randomUUID()
    // Without a tokens limit settle has nothing to correct, so nothing is remembered.
    if (checked.tokensPerMinute !== undefined) {
      this.sql(
        `DELETE FROM reservations WHERE id IN
           (SELECT id FROM reservations ORDER BY expires_ms LIMIT
             max(0, (SELECT count(*) FROM reservations) - ?))`,
        maxOpenReservations - 1,
      )
      this.sql(
        'INSERT INTO reservations (id, estimated_tokens, expires_ms) VALUES (?, ?, ?)',
        reservation,
        estimatedTokens,
        nowMs + reservationTtlMs,
      )
    }
    return { admitted: true, reservation, state: result.buckets }
  }

  /** Corrects the tokens bucket by actual - estimate; an unknown or settled reservation is ignored. */
  private settleChecked(
    limits: QuotaLimits,
    reservation: string,
    actualTokens: number,
    nowMs: number,
  ): void {
    const checked = parseQuotaLimits(limits)
    this.prepare(nowMs)
    const open = this.sql<{ estimated_tokens: number }>(
      'SELECT estimated_tokens FROM reservations WHERE id = ?',
      String(reservation),
    )[0]
    if (open === undefined) return
    const buckets = settleBuckets(
      this.readBuckets(),
      checked,
      open.estimated_tokens,
      actualTokens,
      nowMs,
    )
    this.writeBuckets(buckets)
    this.sql('DELETE FROM reservations WHERE id = ?', String(reservation))
  }

  private prepare(nowMs: number): void {
    if (!this.schemaReady) {
      this.sql('CREATE TABLE IF NOT EXISTS buckets (id INTEGER PRIMARY KEY, state TEXT NOT NULL)')
      this.sql(
        `CREATE TABLE IF NOT EXISTS reservations
           (id TEXT PRIMARY KEY, estimated_tokens INTEGER NOT NULL, expires_ms REAL NOT NULL)`,
      )
      this.sql('CREATE INDEX IF NOT EXISTS reservations_by_expiry ON reservations (expires_ms)')
      this.schemaReady = true
    }
    this.sql('DELETE FROM reservations WHERE expires_ms <= ?', nowMs)
  }

  private readBuckets(): QuotaBuckets {
    const row = this.sql<{ state: string }>('SELECT state FROM buckets WHERE id = 0')[0]
    return row === undefined ? {} : (JSON.parse(row.state) as QuotaBuckets)
  }

  private writeBuckets(buckets: QuotaBuckets): void {
    this.sql(
      'INSERT INTO buckets (id, state) VALUES (0, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state',
      JSON.stringify(buckets),
    )
  }

  private sql<Row>(query: string, ...bindings: (string | number)[]): Row[] {
    return this.ctx.storage.sql.exec(query, ...bindings).toArray() as Row[]
  }
}

/** The RPC answer to malformed input. */
export interface Invalid {
  invalid: string
}

function invalidAsValue<T>(run: () => T): T | Invalid {
  try {
    return run()
  } catch (error) {
    if (KinfError.isInstance(error) && error.code === 'invalid_request')
      return { invalid: error.message }
    throw error
  }
}
