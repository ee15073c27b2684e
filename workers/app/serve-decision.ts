import {
  type AttemptStep,
  attemptPlanner,
  type Exhausted,
  type ServeDecision,
} from '../../shared/attempts/attempt-planner.ts'
import type { EdgeClaims } from '../../shared/auth/edge-signature.ts'
import { converseUnhonoured, withoutFields } from '../../shared/bedrock/converse-capabilities.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { burstDropFields } from '../../shared/policy/burst-drop-fields.ts'
import { heldLocalBy } from '../../shared/policy/held-local-by.ts'
import { type AnswerContext, answer } from './answer-upstream.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { type AttemptTried, forwardLocal } from './forward-local.ts'
import { localityError } from './locality-error.ts'
import type { EdgeRequest } from './read-edge-request.ts'
import { localCharge } from './request-charge.ts'
import { type AttemptContext, type ExternalAttempt, serveExternal } from './serve-external.ts'
import { scorerBody } from './upstream-body.ts'

export interface ServeContext extends AttemptContext {
  /** The edge's own id for the request, signed to the scorer (which keys its log on it). */
  edgeId: string
  /** Headers passed upstream (shared/attempts/pass-through-headers.ts). */
  passHeaders: Record<string, string>
}

/**
 * Where the attempts start (where the scorer handed the decision over, or the first), and
 * who decided (decide-request.ts's EdgeOutcome carries both).
 */
interface DecidedStart {
  from: number
  notes: readonly string[]
  decider: 'edge' | 'scorer'
}

/** The meter of an answer served by a pool: the tenant charged what vLLM used. */
export function localMeter(context: AttemptContext): AnswerContext['meter'] {
  return (outcome, promptTokens) =>
    context.charge(
      localCharge(outcome, {
        promptTokens: promptTokens ?? context.basis.promptTokens,
        reservedOutput: context.basis.reservedOutput,
      }),
    )
}

/**
 * Makes the decision's attempts as the attempt planner (shared/attempts/attempt-planner.ts)
 * says, from `start` (where the scorer handed the decision over). A local attempt moves on
 * when the scorer answers "saturated" or cannot be reached; an external one on a retryable
 * failure or a spent provider budget. A request held local by a constraint (PII) never
 * reaches an external attempt, and gets the constraint's error instead of waiting on a
 * saturated pool.
 */
export async function serveDecision(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  decision: ServeDecision,
  context: ServeContext,
  start: DecidedStart = { from: 0, notes: [], decider: 'edge' },
): Promise<Response> {
  const heldBy = heldLocalBy(snapshot, decision.policy, request.labels, request.detectorFailed)
  const drop = burstDropFields(snapshot, decision)
  const kept = keptLocal(decision, start, externalRefusal(request, drop))
  const planner = attemptPlanner<Response>(kept.decision, { heldBy, resume: kept.start })
  // The scorer logged the external attempt it handed over; the edge logs any other it makes.
  const scorerLogged = start.decider === 'scorer' ? start.from : null
  const { policy, rule } = decision
  let step = planner.first()
  while (step.kind === 'try') {
    const logged = step.index === scorerLogged ? null : { policy, rule, edgeId: context.edgeId }
    const tried =
      step.target.locality === 'External'
        ? await tryExternal(
            deps,
            snapshot,
            withoutDropped(request, drop),
            { step, logged },
            context,
          )
        : await tryLocal(deps, snapshot, request, { decision, step }, context)
    if (tried.kind === 'served') return tried.response
    step = planner.after(step, tried)
    // A saturated pool's answer reaches the client only when nothing followed it.
    if (tried.kind === 'saturated' && (step.kind === 'try' || step.failed?.result !== tried))
      await tried.answer?.body?.cancel()
  }
  return exhausted(deps, request, decision, step, context)
}

/**
 * One external attempt: skipped when the provider cannot serve the request as asked. Logged
 * in the decision log (EdgeDeps.decisions) unless `logged` is null (the scorer logged it).
 */
async function tryExternal(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  { step, logged }: { step: AttemptStep; logged: ExternalAttempt['logged'] },
  context: ServeContext,
): Promise<AttemptTried> {
  const { target } = step
  const refusal = externalRefusal(request, [])
  if (refusal !== null) return { kind: 'skipped', why: refusal.text }
  const provider = target.provider ? snapshot.providers[target.provider] : undefined
  if (!provider || !target.provider)
    throw new KinfError('internal', `provider of ${target.backend} not in config`)
  let served: Awaited<ReturnType<typeof serveExternal>>
  try {
    served = await serveExternal(
      deps,
      request,
      {
        backend: target.backend,
        providerId: target.provider,
        provider,
        model: target.model,
        decision: step.decisionHeader,
        logged,
      },
      context,
      step.notes,
    )
  } catch (error) {
    if (KinfError.isInstance(error) && error.isRetryable)
      return { kind: 'unavailable', why: error.message, error }
    throw error
  }
  if ('refused' in served) return { kind: 'refused', why: served.refused, error: served.error }
  if (step.burst) deps.metrics.inc('burst', { backend: target.backend })
  return { kind: 'served', response: served.response }
}

/** One local attempt, through the scorer: "saturated" at once only when step.allowBurst. */
async function tryLocal(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
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
    decidedBy: { policy: decision.policy, rule: decision.rule },
    requestId: context.edgeId,
  }
  const path = request.kind === 'chat' ? '/v1/chat/completions' : '/v1/completions'
  const body = await scorerBody(deps, snapshot, request, target.model)
  return forwardLocal(deps, { path, body, claims }, context, (response) =>
    answer(response, request, answerContext(context), {
      decision: step.decisionHeader,
      notes: step.notes,
    }),
  )
}

/**
 * Nothing left to try. A request that must stay local gets its constraint's refusal
 * (counted): 503 with Retry-After when an in-cluster backend could serve it but is busy,
 * 400 when every attempt was external (locality-refusal.ts). Otherwise the last attempt's
 * own answer or error; or, every attempt skipped, why none could serve it.
 */
async function exhausted(
  deps: EdgeDeps,
  request: EdgeRequest,
  decision: ServeDecision,
  end: Exhausted<Response>,
  context: ServeContext,
): Promise<Response> {
  const failed = end.failed?.result ?? null
  if (end.keptLocal) {
    if (failed?.kind === 'saturated') await failed.answer?.body?.cancel()
    const { constraint, busy } = end.keptLocal
    deps.metrics.inc('pii_kept_local', { constraint: constraint.name })
    throw localityError(
      constraint,
      request,
      busy,
      failed && 'error' in failed ? failed.error : null,
    )
  }
  if (failed?.kind === 'saturated' && failed.answer && end.failed)
    return answer(failed.answer, request, answerContext(context), {
      decision: end.failed.step.decisionHeader,
      notes: end.notes,
    })
  if (failed && 'error' in failed) throw failed.error
  // Every attempt skipped: external only, and a request those backends cannot serve; or
  // local ones saturated before an external one skipped.
  throw (
    notServable(decision, request, end.notes) ??
    new KinfError(
      'upstream_unavailable',
      `no backend could take the request (${end.notes.join('; ')})`,
    )
  )
}

/**
 * A request only external backends could serve, which they cannot serve as asked (see
 * externalRefusal): the client's to change, so a 400 naming why, never a retryable 5xx.
 */
function notServable(
  decision: ServeDecision,
  request: EdgeRequest,
  notes: readonly string[],
): KinfError | null {
  if (decision.attempts.some((attempt) => attempt.locality !== 'External')) return null
  const why = externalRefusal(request, [])
  if (why === null) return null
  return new KinfError(
    'invalid_request',
    `model ${request.model} is served here only by external backends, and ${why.text} (${notes.join('; ')})`,
    { param: why.param ?? (request.kind === 'chat' ? 'messages' : 'model') },
  )
}

/**
 * The decision to carry out when its external attempts cannot serve the request as asked
 * (`refusal`) and local ones can: the local attempts alone, so the last of them waits in
 * its pool's queue instead of answering "saturated" for a burst that cannot honour the
 * request (one contract whatever the backend, docs/edge-keys-and-errors.md §2.4). Resumed
 * where the scorer handed over; past its last local attempt (each answered saturated, when
 * a burst still seemed possible), that attempt again, now waiting.
 */
function keptLocal(
  decision: ServeDecision,
  start: { from: number; notes: readonly string[] },
  refusal: ExternalRefusal | null,
): { decision: ServeDecision; start: { from: number; notes: readonly string[] } } {
  const local = decision.attempts.filter((attempt) => attempt.locality !== 'External')
  if (refusal === null || local.length === 0 || local.length === decision.attempts.length)
    return { decision, start }
  const before = decision.attempts
    .slice(0, start.from)
    .filter((attempt) => attempt.locality !== 'External').length
  const notes = [
    ...start.notes,
    ...decision.attempts
      .filter((attempt) => attempt.locality === 'External')
      .map((attempt) => `${attempt.backend}: not burst, ${refusal.text}`),
  ]
  return {
    decision: { ...decision, attempts: local },
    start: { from: Math.min(before, local.length - 1), notes },
  }
}

/** The request without the fields the policy lets a burst drop, for an external attempt. */
function withoutDropped(request: EdgeRequest, drop: readonly string[]): EdgeRequest {
  if (drop.length === 0 || request.openAi.kind !== 'chat') return request
  const body = withoutFields(request.openAi.body, drop)
  if (body === request.openAi.body) return request
  return { ...request, body, openAi: { kind: 'chat', body } }
}

/** Why external backends cannot serve a request as asked, and the field at fault. */
interface ExternalRefusal {
  text: string
  param: string | null
}

/**
 * Why an external provider (Converse) cannot serve this request as vLLM would; null when it
 * can. Converse continues a final assistant message (a prefill), never a user's, and honours
 * none of the fields shared/bedrock/converse-capabilities.ts lists but those in `drop`.
 */
function externalRefusal(request: EdgeRequest, drop: readonly string[]): ExternalRefusal | null {
  if (request.openAi.kind !== 'chat')
    return { text: 'external backends serve chat completions only', param: null }
  const { body } = request.openAi
  if (body.continue_final_message && body.messages.at(-1)?.role !== 'assistant')
    return {
      text: 'external backends continue only a final assistant message (continue_final_message)',
      param: 'continue_final_message',
    }
  const unhonoured = converseUnhonoured(body).filter(({ field }) => !drop.includes(field))
  const [first] = unhonoured
  if (first === undefined) return null
  const fields = unhonoured.map(({ field, why }) => `${field} (${why})`).join(', ')
  return { text: `external backends (Bedrock) cannot honour ${fields}`, param: first.field }
}

/** How a pool's answer reaches the client and is metered. */
export function answerContext(context: AttemptContext): AnswerContext {
  return {
    requestId: context.requestId,
    meter: localMeter(context),
    decisionHeaders: context.decisionHeaders,
  }
}
