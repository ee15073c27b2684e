import { z } from 'zod'

const positiveError = 'must be a positive integer'

/** A whole number of at least 1; the message reads after the option's name. */
export const PositiveCount = z.int({ error: positiveError }).min(1, { error: positiveError })

/** What every QuotaStore implementation takes, defaults included. */
export const QuotaStoreOptions = z.strictObject({
  reservationTtlMs: PositiveCount.default(600_000).describe(
    'How long an unsettled reservation can still be settled, in ms (10 minutes)',
  ),
})
export type QuotaStoreOptions = z.infer<typeof QuotaStoreOptions>
