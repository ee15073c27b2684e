import { z } from 'zod'
import { KinfError } from '../errors/kinf-error.ts'

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

/**
 * Options of a QuotaStore, parsed once when it is created: the fully defaulted values, or
 * KinfError 'invalid_config' naming the first bad option (e.g. "memory quota store:
 * reservationTtlMs must be a positive integer").
 */
export function parseQuotaStoreOptions<T>(
  schema: z.ZodType<T>,
  input: unknown,
  subject: string,
): T {
  const parsed = schema.safeParse(input)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const name = issue?.path.join('.') ?? ''
  const message = issue?.message ?? 'invalid options'
  throw new KinfError('invalid_config', `${subject}: ${name === '' ? '' : `${name} `}${message}`)
}
