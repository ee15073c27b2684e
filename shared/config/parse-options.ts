import { z } from 'zod'
import { KinfError } from '../errors/kinf-error.ts'

/**
 * Options of something being created, parsed once against their schema: the fully
 * defaulted values, or KinfError 'invalid_config' naming the subject and the first bad
 * option (e.g. "kv index: maxPods must be a positive integer").
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  input: unknown,
  subject: string,
): z.output<S> {
  const parsed = schema.safeParse(input)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const name = issue?.path.join('.') ?? ''
  const message = issue?.message ?? 'invalid options'
  throw new KinfError('invalid_config', `${subject}: ${name === '' ? '' : `${name} `}${message}`, {
    cause: parsed.error,
  })
}

/** An options field holding a function (a callback, a clock), typed by the caller. */
export function functionOption<T>() {
  return z.custom<T>((value) => typeof value === 'function', 'must be a function')
}
