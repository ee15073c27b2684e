import { KinfError } from '../../shared/errors/kinf-error.ts'

export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'Error'
}

function errorStatus(error: unknown): number | undefined {
  const metadata = (error as { $metadata?: { httpStatusCode?: number } }).$metadata
  return metadata?.httpStatusCode
}

/** Retry-After from Bedrock's answer when it sent one (it usually does not). */
function retryAfterHeader(error: unknown): number | undefined {
  const headers = (error as { $response?: { headers?: Record<string, string> } }).$response?.headers
  const value = Number(headers?.['retry-after'])
  return Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined
}

/**
 * A Bedrock or SDK failure as a KinfError (the table in docs/edge-keys-and-errors.md §2).
 * A 429 or 503 carries `retryAfterSeconds` (Bedrock's header, else the hint): a client told
 * to come back is told when.
 */
export function bedrockError(error: unknown, retryAfterSeconds = 1): KinfError {
  if (KinfError.isInstance(error)) return error
  const name = errorName(error)
  const detail = `Bedrock ${name}: ${error instanceof Error ? error.message : String(error)}`
  const later = { cause: error, retryAfterSeconds: retryAfterHeader(error) ?? retryAfterSeconds }
  switch (name) {
    case 'ThrottlingException':
    case 'ModelNotReadyException':
    case 'ServiceQuotaExceededException':
      return new KinfError('rate_limited', detail, later)
    case 'ValidationException':
      return new KinfError('invalid_request', detail, { cause: error })
    case 'ServiceUnavailableException':
    case 'InternalServerException':
    case 'ModelTimeoutException':
    case 'TimeoutError':
      return new KinfError('upstream_unavailable', detail, later)
    case 'AccessDeniedException':
    case 'ResourceNotFoundException':
    case 'ModelErrorException':
    case 'ModelStreamErrorException':
      return new KinfError('upstream_error', detail, { cause: error })
  }
  const status = errorStatus(error)
  // No HTTP answer at all (refused, reset, DNS): Bedrock is unreachable from here.
  if (status === undefined || status >= 500)
    return new KinfError('upstream_unavailable', detail, later)
  return new KinfError('upstream_error', detail, { cause: error })
}

/** The caller's signal fired: its deadline passed (503, retry in a second) or it left. */
export function bedrockAbortError(signal: AbortSignal): KinfError {
  const timedOut = (signal.reason as { name?: string } | undefined)?.name === 'TimeoutError'
  return new KinfError(
    'upstream_unavailable',
    timedOut
      ? 'Bedrock did not answer in time'
      : 'the request was cancelled before Bedrock answered',
    { cause: signal.reason, retryAfterSeconds: 1 },
  )
}
