import type { AttemptResult } from '../../shared/attempts/attempt-planner.ts'
import type { EdgeClaims } from '../../shared/auth/edge-signature.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { kinferenceHeaders } from '../../shared/protocol/kinference-headers.ts'
import type { EdgeDeps } from './edge-deps.ts'
import type { ScorerPort } from './scorer-client.ts'

/** What making one attempt came to: its answer, or what the planner goes on from. */
export type AttemptTried = { kind: 'served'; response: Response } | AttemptResult<Response>

/**
 * A local attempt's call to the scorer: an unreachable scorer, or a pool that answers
 * "saturated", is for the attempt planner to go on from; any other answer is the client's,
 * as `answerWith` makes it.
 */
export async function forwardLocal(
  deps: EdgeDeps,
  call: { path: Parameters<ScorerPort['forward']>[0]; body: string; claims: EdgeClaims },
  context: { passHeaders: Record<string, string>; signal?: AbortSignal },
  answerWith: (response: Response) => Promise<Response>,
): Promise<AttemptTried> {
  let response: Response
  try {
    response = await deps.scorer.forward(
      call.path,
      call.body,
      call.claims,
      context.passHeaders,
      context.signal,
    )
  } catch (error) {
    if (!KinfError.isInstance(error) || error.code !== 'upstream_unavailable') throw error
    deps.metrics.inc('scorer_unreachable')
    return { kind: 'unavailable', why: 'scorer unreachable', error }
  }
  if (response.status === 503 && response.headers.get(kinferenceHeaders.saturated) === '1')
    return { kind: 'saturated', answer: response }
  return { kind: 'served', response: await answerWith(response) }
}
