import { z } from 'zod'

/** The longest request id passed on or logged; the edge makes its own past it. */
export const maxRequestIdLength = 128

/**
 * A request id as Kinference passes it on and logs it: 1 to 128 printable ASCII
 * characters (0x21 to 0x7E), no space or control character. Clients' `x-request-id`
 * outside this is dropped: a pod answers a bare 431 to one past about 16 KiB, and control
 * characters would reach an operator's terminal through `kinfctl inspect`.
 */
export const requestIdPattern = /^[\x21-\x7e]{1,128}$/

export const RequestId = z.string().regex(requestIdPattern)

/** `value` when it is a request id as above; null otherwise (absent, too long, unprintable). */
export function validRequestId(value: string | null | undefined): string | null {
  return typeof value === 'string' && requestIdPattern.test(value) ? value : null
}
