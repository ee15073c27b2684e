import type { KinfError, KinfErrorCode } from '../errors/kinf-error.ts'

/** OpenAI's error body; `code` is a short machine-readable string (or null). */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null }
}

const typeByCode: Record<KinfErrorCode, string> = {
  invalid_request: 'invalid_request_error',
  invalid_config: 'server_error',
  unauthorized: 'authentication_error',
  forbidden: 'permission_error',
  not_found: 'invalid_request_error',
  payload_too_large: 'invalid_request_error',
  rate_limited: 'rate_limit_error',
  saturated: 'saturated',
  upstream_error: 'server_error',
  upstream_unavailable: 'server_error',
  locality_violation: 'server_error',
  internal: 'server_error',
}

/**
 * OpenAI's type for the error. A locality refusal is the client's to change when no
 * in-cluster backend serves the model (400) and the server's when they are busy (503): the
 * official client picks its class by status, and the type says the same.
 */
function typeOf(error: KinfError): string {
  if (error.code === 'locality_violation')
    return error.status < 500 ? 'invalid_request_error' : 'server_error'
  return typeByCode[error.code]
}

/**
 * The code of an error another server answered with `status`, so that it takes the type
 * OpenAI gives that status (the official client picks its error class by status alone:
 * 400 BadRequest, 401 Authentication, 403 PermissionDenied, 404 NotFound, 409 Conflict,
 * 422 UnprocessableEntity, 429 RateLimit, 5xx InternalServer). Any other 4xx is the
 * request's fault, any 5xx (and anything else) the server's.
 */
export function errorCodeOfStatus(status: number): KinfErrorCode {
  switch (status) {
    case 401:
      return 'unauthorized'
    case 403:
      return 'forbidden'
    case 404:
      return 'not_found'
    case 413:
      return 'payload_too_large'
    case 429:
      return 'rate_limited'
    case 503:
      return 'upstream_unavailable'
    default:
      return status >= 400 && status < 500 ? 'invalid_request' : 'upstream_error'
  }
}

/** The body every Kinference HTTP service answers an error with, in OpenAI's shape. */
export function openAiErrorBody(
  error: KinfError,
  detail: { param?: string | null; code?: string | null } = {},
): OpenAiErrorBody {
  return {
    error: {
      message: error.message,
      type: typeOf(error),
      param: detail.param ?? error.param,
      code: detail.code ?? error.openAiCode ?? error.code,
    },
  }
}
