import type { LocalityConstraint } from '../../shared/crd/inference-policy.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { localityRefusal } from '../../shared/policy/locality-refusal.ts'
import type { EdgeRequest } from './read-edge-request.ts'

/**
 * The client's error for a request `constraint` keeps in the cluster when no backend there
 * takes it: `busy` says why the in-cluster backends that could serve it cannot now (503,
 * retry), null when none could (400). The edge knows what the scan could not read, so its
 * wording is the precise one.
 */
export function localityError(
  constraint: LocalityConstraint,
  request: Pick<EdgeRequest, 'model' | 'labels' | 'detectorFailed' | 'unreadable'>,
  busy: string | null,
  cause?: unknown,
): KinfError {
  const refusal = localityRefusal({
    constraint,
    model: request.model,
    labels: request.labels,
    detectorFailed: request.detectorFailed,
    unreadable: request.unreadable,
    busy,
  })
  return new KinfError('locality_violation', refusal.message, {
    status: refusal.status,
    openAiCode: 'locality_violation',
    ...(refusal.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: refusal.retryAfterSeconds }),
    ...(cause === undefined || cause === null ? {} : { cause }),
  })
}
