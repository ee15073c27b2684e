import {
  type AttemptStep,
  attemptPlanner,
  type ServeDecision,
} from '../../shared/attempts/attempt-planner.ts'
import type { EdgeClaims } from '../../shared/auth/edge-signature.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { heldLocalBy } from '../../shared/policy/held-local-by.ts'
import { answerEmbeddings } from './answer-upstream.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { type AttemptTried, forwardLocal } from './forward-local.ts'
import { localityError } from './locality-error.ts'
import type { EmbeddingEdgeRequest } from './read-embedding-request.ts'
import { answerContext, type ServeContext } from './serve-decision.ts'

/** Why no external backend is tried for an embedding (the fallback notes say it). */
const noExternalEmbeddings = 'external backends have no embeddings API'

/**
 * Serves an embeddings request as the policy decided: its in-cluster attempts in order,
 * through the scorer (which picks the pod), moving on when a pool answers "saturated" or
 * the scorer cannot be reached, the last one waiting in its pool's queue. External attempts
 * are never made: Bedrock's Converse API has no embeddings, and a request sent there would
 * get another model's vectors or an error. A rule that serves the model only externally is
 * the client's to change (400); a request a constraint keeps local, its pools busy, gets
 * the constraint's refusal as a completion would.
 */
export async function serveEmbeddingDecision(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EmbeddingEdgeRequest,
  decision: ServeDecision,
  context: ServeContext,
): Promise<Response> {
  const local = decision.attempts.filter((attempt) => attempt.locality !== 'External')
  const notes = decision.attempts
    .filter((attempt) => attempt.locality === 'External')
    .map((attempt) => `${attempt.backend}: not tried, ${noExternalEmbeddings}`)
  if (local.length === 0)
    throw new KinfError(
      'invalid_request',
      `model ${request.model} is served here only by external backends, and ${noExternalEmbeddings} (${notes.join('; ')})`,
      { param: 'model', openAiCode: 'model_not_supported' },
    )
  const heldBy = heldLocalBy(snapshot, decision.policy, request.labels, request.detectorFailed)
  const planner = attemptPlanner<Response>(
    { ...decision, attempts: local },
    { heldBy, resume: { from: 0, notes } },
  )
  let step = planner.first()
  while (step.kind === 'try') {
    const tried = await tryPool(deps, snapshot, request, { decision, step }, context)
    if (tried.kind === 'served') return tried.response
    step = planner.after(step, tried)
    // A saturated pool's answer reaches the client only when nothing followed it.
    if (tried.kind === 'saturated' && (step.kind === 'try' || step.failed?.result !== tried))
      await tried.answer?.body?.cancel()
  }
  const failed = step.failed?.result ?? null
  if (step.keptLocal) {
    if (failed?.kind === 'saturated') await failed.answer?.body?.cancel()
    deps.metrics.inc('pii_kept_local', { constraint: step.keptLocal.constraint.name })
    const cause = failed && 'error' in failed ? failed.error : null
    throw localityError(step.keptLocal.constraint, request, step.keptLocal.busy, cause)
  }
  if (failed?.kind === 'saturated' && failed.answer && step.failed)
    return answerEmbeddings(failed.answer, answerContext(context), {
      decision: step.failed.step.decisionHeader,
      notes: step.notes,
    })
  if (failed && 'error' in failed) throw failed.error
  throw new KinfError(
    'upstream_unavailable',
    `no pool could take the request (${step.notes.join('; ')})`,
  )
}

/** One in-cluster attempt through the scorer: "saturated" at once only when step.allowBurst. */
async function tryPool(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EmbeddingEdgeRequest,
  { decision, step }: { decision: ServeDecision; step: AttemptStep },
  context: ServeContext,
): Promise<AttemptTried> {
  const { target } = step
  const claims: EdgeClaims = {
    tenant: request.tenant,
    labels: request.labels,
    backends: [snapshot.backends[target.backend]?.name ?? target.backend],
    allowBurst: step.allowBurst,
    detectorFailed: request.detectorFailed,
    promptTokens: request.promptTokens,
    decidedBy: { policy: decision.policy, rule: decision.rule },
    requestId: context.edgeId,
  }
  // The client's bytes, unless the policy serves the model under another name.
  const body =
    target.model === request.model
      ? request.text
      : JSON.stringify({ ...request.body, model: target.model })
  return forwardLocal(deps, { path: '/v1/embeddings', body, claims }, context, (response) =>
    answerEmbeddings(response, answerContext(context), {
      decision: step.decisionHeader,
      notes: step.notes,
    }),
  )
}
