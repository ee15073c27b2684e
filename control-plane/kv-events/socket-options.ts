import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'

/*
 * Numeric socket options, checked before any socket exists: when libzmq refuses an option
 * passed to a zeromq.js socket constructor, the half-made socket crashes the process at
 * exit (segmentation fault, zeromq 6.8), so a bad value must never reach it.
 */

const int32Max = 2 ** 31 - 1

/** Messages queued per peer; 0 is no limit. */
export const HighWaterMark = z.int().min(0).max(int32Max)
export const TimeoutMs = z.int().min(1).max(int32Max)
export const MessageBytes = z.int().min(1)
export const Count = z.int().min(1)

export function checkOption<T>(schema: z.ZodType<T>, name: string, value: unknown): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const reason = parsed.error.issues[0]?.message ?? 'invalid'
  throw new KinfError('invalid_config', `kv-events: ${name} ${String(value)}: ${reason}`)
}
