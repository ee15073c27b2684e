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
  locality_violation: 'policy_error',
  internal: 'server_error',
}

/** The body every Kinference HTTP service answers an error with, in OpenAI's shape. */
export function openAiErrorBody(
  error: KinfError,
  detail: { param?: string | null; code?: string | null } = {},
): OpenAiErrorBody {
  return {
    error: {
      message: error.message,
      type: typeByCode[error.code],
      param: detail.param ?? error.param,
      code: detail.code ?? error.openAiCode ?? error.code,
    },
  }
}
