import { z } from 'zod'

/** Every failure the project reports has one of these codes; HTTP status and CLI exit follow from it. */
export const KinfErrorCode = z.enum([
  'invalid_request',
  'invalid_config',
  'unauthorized',
  'forbidden',
  'not_found',
  'payload_too_large',
  'rate_limited',
  'saturated',
  'upstream_error',
  'upstream_unavailable',
  'locality_violation',
  'internal',
])
export type KinfErrorCode = z.infer<typeof KinfErrorCode>

const defaultStatus: Record<KinfErrorCode, number> = {
  invalid_request: 400,
  invalid_config: 422,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  payload_too_large: 413,
  rate_limited: 429,
  saturated: 503,
  upstream_error: 502,
  upstream_unavailable: 503,
  locality_violation: 503,
  internal: 500,
}

const marker = Symbol.for('kinference.error')

export interface KinfErrorOptions {
  status?: number
  cause?: unknown
  /** For rate_limited and the like: when the caller may try again (HTTP Retry-After). */
  retryAfterSeconds?: number
  /** OpenAI's error.param: the request field at fault. */
  param?: string | null
  /** OpenAI's error.code when it is more specific than `code` (model_not_found, invalid_api_key). */
  openAiCode?: string
}

/**
 * The one error class. Expected outcomes (a denial, no eligible pod) are values, not
 * exceptions; this is for what the caller cannot carry on from.
 */
export class KinfError extends Error {
  readonly [marker] = true
  readonly code: KinfErrorCode
  readonly status: number
  readonly isRetryable: boolean
  readonly retryAfterSeconds: number | undefined
  readonly param: string | null
  readonly openAiCode: string | undefined

  constructor(code: KinfErrorCode, message: string, options: KinfErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'KinfError'
    this.code = code
    this.status = options.status ?? defaultStatus[code]
    this.isRetryable = this.status === 408 || this.status === 429 || this.status >= 500
    this.retryAfterSeconds = options.retryAfterSeconds
    this.param = options.param ?? null
    this.openAiCode = options.openAiCode
  }

  /** Works across realms and duplicated bundles, unlike instanceof. */
  static isInstance(value: unknown): value is KinfError {
    return typeof value === 'object' && value !== null && marker in value
  }
}
