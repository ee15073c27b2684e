import { z } from 'zod'
import { KinfError, type KinfErrorCode } from '../../shared/errors/kinf-error.ts'

/**
 * The error envelope of Cloudflare's v4 API:
 * `{"success":false,"errors":[{"code":10000,"message":"Authentication error"}],"messages":[],"result":null}`.
 */
const Envelope = z.object({
  success: z.boolean().optional(),
  errors: z
    .array(z.object({ code: z.number(), message: z.string() }).loose())
    .optional()
    .default([]),
})

export interface CloudflareApiFailure {
  ok: false
  error: KinfError
  /** The HTTP status, or null when no answer came. */
  status: number | null
  /** Cloudflare's own error codes (10000 authentication, 10013 namespace, 971 rate). */
  codes: number[]
}

/**
 * An answer Cloudflare refused, as a value; `secret` is cut from every message. `body`:
 * the answer's text when the caller already read it.
 */
export async function cloudflareApiFailure(
  response: Response,
  what: string,
  secret: string,
  body?: string,
): Promise<CloudflareApiFailure> {
  const text = body ?? (await response.text().catch(() => ''))
  const errors = errorsOf(text)
  const { status } = response
  const detail =
    errors.length > 0
      ? errors.map((error) => `${error.message} [code: ${error.code}]`).join('; ')
      : (response.statusText || 'no Cloudflare error in the answer').slice(0, 200)
  const retryAfterSeconds = retryAfterOf(response.headers.get('retry-after'))
  const [code, hint] = classify(status, errors, retryAfterSeconds)
  const message = redact(`cloudflare kv: ${what}: HTTP ${status}: ${detail}${hint}`, secret)
  const error = new KinfError(code, message, {
    // A 4xx keeps its status, so isRetryable stays false; anything else odd counts as 502.
    ...(code === 'upstream_error' && status >= 400 ? { status } : {}),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  })
  return { ok: false, error, status, codes: errors.map((e) => e.code) }
}

/** No answer at all: a timeout or a connection that failed. */
export function cloudflareUnreachable(
  what: string,
  error: unknown,
  timeoutMs: number,
  secret: string,
): CloudflareApiFailure {
  const timedOut = error instanceof Error && error.name === 'TimeoutError'
  const reason = timedOut
    ? `no answer within ${timeoutMs} ms`
    : error instanceof Error
      ? error.message
      : String(error)
  const message = redact(`cloudflare kv: ${what}: ${reason}; retry later`, secret)
  const kinf = new KinfError('upstream_unavailable', message, { cause: error })
  return { ok: false, error: kinf, status: null, codes: [] }
}

/** Codes Cloudflare gives a missing or malformed Authorization header, with HTTP 400. */
const headerCodes = new Set([9106, 6003, 6111])

function classify(
  status: number,
  errors: { code: number }[],
  retryAfter: number | undefined,
): [KinfErrorCode, string] {
  const auth = '; check the API token (Workers KV Storage: Edit) and the account id'
  if (status === 401 || (status === 400 && errors.some((e) => headerCodes.has(e.code))))
    return ['unauthorized', auth]
  if (status === 403) return ['forbidden', auth]
  if (status === 404) return ['not_found', '; check the account and namespace ids']
  if (status === 413) return ['payload_too_large', '']
  if (status === 429) return ['rate_limited', `; retry after ${retryAfter ?? 'a few'} seconds`]
  if (status >= 500) return ['upstream_unavailable', '; retry later']
  return ['upstream_error', '']
}

function errorsOf(text: string): { code: number; message: string }[] {
  try {
    const parsed = Envelope.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data.errors : []
  } catch {
    return []
  }
}

/** Retry-After as seconds or an HTTP date. */
function retryAfterOf(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds)
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000))
}

function redact(text: string, secret: string): string {
  return secret === '' ? text : text.split(secret).join('***')
}
