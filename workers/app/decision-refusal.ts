import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { errorCodeOfStatus } from '../../shared/openai/openai-error-body.ts'
import { heldLocalBy } from '../../shared/policy/held-local-by.ts'
import type { PolicyDecision } from '../../shared/policy/policy-decision.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { localityError } from './locality-error.ts'
import type { EdgeRequest } from './read-edge-request.ts'

/** A decision that serves nothing: a rule's (or a constraint's) refusal, or a deferral. */
export type Refusal = Exclude<PolicyDecision, { kind: 'serve' }>

/**
 * The client's error for a refused or deferred request, counted: a locality refusal in the
 * edge's precise words (it knows what the scan could not read), a rule's own status and
 * code, or a deferral's 429 with its Retry-After. Whatever the API the request came on.
 */
export function refusalOf(
  deps: Pick<EdgeDeps, 'metrics'>,
  snapshot: ConfigSnapshot,
  request: Pick<EdgeRequest, 'model' | 'labels' | 'detectorFailed' | 'unreadable'>,
  decision: Refusal,
): KinfError {
  if (decision.kind === 'defer') {
    deps.metrics.inc('rejected', { code: 'deferred' })
    return new KinfError(
      'rate_limited',
      `rule ${decision.rule}: deferred work runs only while the pool is idle enough (saturation ≤ ${decision.maxSaturation}); retry later`,
      { retryAfterSeconds: decision.retryAfterSeconds, openAiCode: 'deferred' },
    )
  }
  deps.metrics.inc('rejected', { code: decision.code })
  // The policy decided without knowing what the scan could not read: the edge says it.
  const hold =
    decision.code === 'locality_violation'
      ? heldLocalBy(snapshot, decision.policy, request.labels, request.detectorFailed)
      : null
  if (hold) return localityError(hold, request, null)
  const code =
    decision.code === 'locality_violation'
      ? 'locality_violation'
      : errorCodeOfStatus(decision.status)
  // A shed request's Retry-After is the policy's (its predicted drain); a 503's is 5 s.
  const retryAfterSeconds = decision.retryAfterSeconds ?? (decision.status === 503 ? 5 : undefined)
  return new KinfError(code, decision.message, {
    status: decision.status,
    openAiCode: decision.code,
    param: decision.code === 'model_not_found' ? 'model' : null,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  })
}
