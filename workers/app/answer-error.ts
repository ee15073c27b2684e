import type { Context } from 'hono'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { Log } from '../../shared/logging/log.ts'
import { openAiErrorBody } from '../../shared/openai/openai-error-body.ts'
import { validRequestId } from '../../shared/openai/request-id.ts'
import type { EdgeEnv } from './stages/edge-stage.ts'

/**
 * Any stage's error as OpenAI's error body, with its status, Retry-After and the request's
 * id. What is not a KinfError is a 500 that says nothing of its cause (the log has it).
 */
export function answerError(log: Log) {
  return (error: Error, c: Context<EdgeEnv>): Response => {
    const failure = KinfError.isInstance(error)
      ? error
      : new KinfError('internal', 'internal error', { cause: error })
    // Set when the quota stage ran (stages/admit-request.ts): a refusal carries the state.
    const headers: Record<string, string> = {
      ...((c.get('rateLimits') as Record<string, string> | undefined) ?? {}),
    }
    if (failure.retryAfterSeconds !== undefined)
      headers['retry-after'] = String(Math.max(1, Math.ceil(failure.retryAfterSeconds)))
    // Unset when the error came before tagRequest (or on a route without it).
    const requestId =
      (c.get('requestId') as string | undefined) ?? validRequestId(c.req.header('x-request-id'))
    if (requestId) headers['x-request-id'] = requestId
    if (failure.code === 'internal')
      log(`internal error: ${error.stack ?? error}`, {
        level: 'error',
        request_id: requestId ?? undefined,
      })
    return c.json(openAiErrorBody(failure), failure.status as 400, headers)
  }
}

/** A path the edge does not serve: 404 unknown_url, as OpenAI answers. */
export function answerNotFound(c: Context<EdgeEnv>): Response {
  return c.json(
    openAiErrorBody(
      new KinfError('not_found', `no route for ${c.req.method} ${c.req.path}`, {
        openAiCode: 'unknown_url',
      }),
    ),
    404,
  )
}
