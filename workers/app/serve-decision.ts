import type { EdgeClaims } from '../../shared/auth/edge-signature.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { decisionHeaderOf } from '../../shared/policy/decision-header.ts'
import { heldLocalBy } from '../../shared/policy/held-local-by.ts'
import type { PolicyDecision } from '../../shared/policy/policy-decision.ts'
import { type AnswerContext, answer } from './answer-upstream.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { localityError } from './locality-error.ts'
import type { EdgeRequest } from './read-edge-request.ts'
import { type ChargeBasis, localCharge } from './request-charge.ts'
import { serveExternal } from './serve-external.ts'
import { scorerBody } from './upstream-body.ts'

type Serve = Extract<PolicyDecision, { kind: 'serve' }>

export interface ServeContext {
  /** The request id passed upstream and echoed to the client. */
  requestId: string
  /** The edge's own id for the request, signed to the scorer (which keys its log on it). */
  edgeId: string
  /** Headers passed upstream as sent (x-request-id, traceparent, tracestate). */
  passHeaders: Record<string, string>
  signal?: AbortSignal
  /**
   * Settles the tenant's quota on what the request used: tokens, or a promise of them (a
   * provider's count). The first call counts; later ones are ignored.
   */
  charge: (tokens: number | Promise<number>) => void
  /** What the request was admitted on (see request-charge.ts). */
  basis: ChargeBasis
  /** Tokens the request was admitted on (prompt + sequences × max_tokens), for provider budgets. */
  estimatedTokens: number
  /** The tenant may see the routing headers (shared/policy/decision-headers-visible.ts). */
  decisionHeaders: boolean
  /** Keeps bookkeeping alive after the response (Workers' waitUntil). */
  background: (work: Promise<unknown>) => void
}

/** The meter of an answer served by a pool: the tenant charged what vLLM used. */
export function localMeter(context: ServeContext): AnswerContext['meter'] {
  return (outcome, promptTokens) =>
    context.charge(
      localCharge(outcome, {
        promptTokens: promptTokens ?? context.basis.promptTokens,
        reservedOutput: context.basis.reservedOutput,
      }),
    )
}

/**
 * Tries the decision's attempts in order. A local attempt moves on when the scorer answers
 * "saturated" (it may, because a later attempt exists) or cannot be reached; an external
 * one on a retryable failure. A request held local by a constraint (PII) never reaches an
 * external attempt, and gets the constraint's error instead of waiting on a saturated pool.
 */
export async function serveDecision(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  decision: Serve,
  context: ServeContext,
  start: { from: number; notes: readonly string[] } = { from: 0, notes: [] },
): Promise<Response> {
  const hold = heldLocalBy(snapshot, decision.policy, request.labels, request.detectorFailed)
  const attempts = decision.attempts
  const notes = [...start.notes]
  for (const [i, attempt] of attempts.entries()) {
    if (i < start.from) continue
    const last = i === attempts.length - 1
    if (attempt.locality === 'External') {
      // Counted once, where the request is refused (keptLocal), not per skipped attempt.
      if (hold) {
        notes.push(`${attempt.backend}: kept local by ${hold.name}`)
        continue
      }
      const refusal = externalRefusal(request)
      if (refusal !== null) {
        notes.push(`${attempt.backend}: ${refusal}`)
        continue
      }
      const provider = attempt.provider ? snapshot.providers[attempt.provider] : undefined
      if (!provider || !attempt.provider)
        throw new KinfError('internal', `provider of ${attempt.backend} not in config`)
      let served: Awaited<ReturnType<typeof serveExternal>>
      try {
        served = await serveExternal(
          deps,
          request,
          {
            backend: attempt.backend,
            providerId: attempt.provider,
            provider,
            model: attempt.model,
            decision: decisionHeaderOf(decision, attempt),
          },
          context,
          notes,
        )
      } catch (error) {
        if (!last && KinfError.isInstance(error) && error.isRetryable) {
          notes.push(`${attempt.backend}: ${error.message}`)
          continue
        }
        throw error
      }
      if ('refused' in served) {
        notes.push(`${attempt.backend}: ${served.refused}`)
        if (!last) continue
        throw served.error
      }
      // A burst whether the local attempt answered saturated first (i > 0) or the policy,
      // seeing the pool saturated, put the external one first (shared/policy/choose-targets.ts).
      if (attempts.some((a) => a.locality !== 'External'))
        deps.metrics.inc('burst', { backend: attempt.backend })
      return served.response
    }
    const claims: EdgeClaims = {
      tenant: request.tenant,
      labels: request.labels,
      backends: [snapshot.backends[attempt.backend]?.name ?? attempt.backend],
      // "saturated" at once when something else can be tried, or when waiting on a full
      // pool would be the only way to serve a request that must stay local.
      allowBurst: !last || hold !== null,
      detectorFailed: request.detectorFailed,
      decidedBy: { policy: decision.policy, rule: decision.rule },
      requestId: context.edgeId,
    }
    const path = request.kind === 'chat' ? '/v1/chat/completions' : '/v1/completions'
    let response: Response
    try {
      response = await deps.scorer.forward(
        path,
        await scorerBody(deps, snapshot, request, attempt.model),
        claims,
        context.passHeaders,
        context.signal,
      )
    } catch (error) {
      if (!KinfError.isInstance(error) || error.code !== 'upstream_unavailable') throw error
      deps.metrics.inc('scorer_unreachable')
      notes.push(`${attempt.backend}: scorer unreachable`)
      if (!last) continue
      throw keptLocal(deps, hold, request, { decision, notes }, error) ?? error
    }
    if (response.status === 503 && response.headers.get('x-kinference-saturated') === '1') {
      notes.push(`${attempt.backend}: saturated`)
      if (!last) {
        await response.body?.cancel()
        continue
      }
      const refused = keptLocal(deps, hold, request, { decision, notes }, null)
      if (refused) {
        await response.body?.cancel()
        throw refused
      }
    }
    return answer(response, request, answerContext(context), {
      decision: decisionHeaderOf(decision, attempt),
      notes,
    })
  }
  // Every attempt was skipped: external only, and the request must stay local or is one
  // those backends cannot serve; or local ones saturated before an external one skipped.
  throw (
    keptLocal(deps, hold, request, { decision, notes }, null) ??
    notServable(decision, request, notes) ??
    new KinfError('upstream_unavailable', `no backend could take the request (${notes.join('; ')})`)
  )
}

/**
 * A request only external backends could serve, which they cannot serve as asked (see
 * externalRefusal): the client's to change, so a 400 naming why, never a retryable 5xx.
 */
function notServable(
  decision: Serve,
  request: EdgeRequest,
  notes: readonly string[],
): KinfError | null {
  if (decision.attempts.some((attempt) => attempt.locality !== 'External')) return null
  const why = externalRefusal(request)
  if (why === null) return null
  return new KinfError(
    'invalid_request',
    `model ${request.model} is served here only by external backends, and ${why} (${notes.join('; ')})`,
    { param: request.kind === 'chat' ? 'messages' : 'model' },
  )
}

/**
 * Why an external provider (Converse) cannot serve this request as vLLM would; null when it
 * can. Converse continues a final assistant message (a prefill), never a user's.
 */
function externalRefusal(request: EdgeRequest): string | null {
  if (request.openAi.kind !== 'chat') return 'external backends serve chat completions only'
  const { body } = request.openAi
  if (body.continue_final_message && body.messages.at(-1)?.role !== 'assistant')
    return 'external backends continue only a final assistant message (continue_final_message)'
  return null
}

/**
 * The constraint's refusal of a request that may not leave, counted; null when not held.
 * Retrying can help only when an in-cluster backend could serve it but is busy (503 with
 * Retry-After); when every attempt was external it cannot (400). See locality-refusal.ts.
 */
function keptLocal(
  deps: EdgeDeps,
  hold: ReturnType<typeof heldLocalBy>,
  request: EdgeRequest,
  tried: { decision: Serve; notes: readonly string[] },
  cause: unknown,
): KinfError | null {
  if (!hold) return null
  deps.metrics.inc('pii_kept_local', { constraint: hold.name })
  const local = tried.decision.attempts.some((attempt) => attempt.locality !== 'External')
  return localityError(hold, request, local ? tried.notes.join('; ') : null, cause)
}

/** How a pool's answer reaches the client and is metered. */
export function answerContext(context: ServeContext): AnswerContext {
  return {
    requestId: context.requestId,
    meter: localMeter(context),
    decisionHeaders: context.decisionHeaders,
  }
}
