import type { EdgeClaims } from '../shared/auth/edge-signature.ts'
import type { ConfigSnapshot } from '../shared/config/config-snapshot.ts'
import { KinfError } from '../shared/errors/kinf-error.ts'
import type { ChatCompletionRequest } from '../shared/openai/chat-completion-request.ts'
import { type Usage, usageOfJson, usageTokens } from '../shared/openai/usage.ts'
import { asciiHeaderValue, decisionHeaderOf } from '../shared/policy/decision-header.ts'
import { heldLocalBy } from '../shared/policy/held-local-by.ts'
import type { PolicyDecision } from '../shared/policy/policy-decision.ts'
import { promptTokensHeader } from '../shared/scorer-api/route-protocol.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { localityError } from './locality-error.ts'
import { reserveProvider } from './provider-budget.ts'
import type { EdgeRequest } from './read-edge-request.ts'
import { scorerBody, withUsage } from './upstream-body.ts'
import { tapSseUsage } from './usage-tap.ts'

type Serve = Extract<PolicyDecision, { kind: 'serve' }>

export interface ServeContext {
  requestId: string
  /** Headers passed upstream as sent (x-request-id, traceparent, tracestate). */
  passHeaders: Record<string, string>
  signal?: AbortSignal
  /**
   * Called once with the answer's usage (null when unknown or failed) and the exact prompt
   * length the scorer counted (null when the answer did not come through it).
   */
  onUsage: (usage: Usage | null, served: boolean, promptTokens: number | null) => void
  /** Tokens the request was admitted on (prompt + max_tokens), for provider budgets. */
  estimatedTokens: number
  /** Keeps bookkeeping alive after the response (Workers' waitUntil). */
  background: (work: Promise<unknown>) => void
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
      const budget = await reserveProvider(
        deps,
        attempt.provider,
        provider,
        context.estimatedTokens,
      )
      if (!budget.admitted) {
        notes.push(`${attempt.backend}: provider ${budget.limit} limit reached`)
        if (!last) continue
        throw new KinfError('rate_limited', `${attempt.provider}: ${budget.message}`, {
          retryAfterSeconds: budget.retryAfterSeconds,
          openAiCode: 'provider_limit',
        })
      }
      const settleProvider = (tokens: number) =>
        context.background(
          budget
            .settle(tokens)
            .catch((error: unknown) =>
              deps.log(`provider budget settle failed: ${(error as Error).message}`),
            ),
        )
      try {
        const response = await deps.external.complete(
          provider,
          attempt.model,
          withUsage(request) as ChatCompletionRequest,
          {
            requestedModel: request.model,
            requestId: context.requestId,
            ...(context.signal ? { signal: context.signal } : {}),
          },
        )
        // A burst whether the local attempt answered saturated first (i > 0) or the policy,
        // seeing the pool saturated, put the external one first (shared/policy/choose-targets.ts).
        if (attempts.some((a) => a.locality !== 'External'))
          deps.metrics.inc('burst', { backend: attempt.backend })
        const counted: ServeContext = {
          ...context,
          onUsage: (usage, served, promptTokens) => {
            settleProvider(served ? (usageTokens(usage) ?? context.estimatedTokens) : 0)
            context.onUsage(usage, served, promptTokens)
          },
        }
        return answer(response, request, counted, {
          decision: decisionHeaderOf(decision, attempt),
          notes,
        })
      } catch (error) {
        settleProvider(0)
        if (!last && KinfError.isInstance(error) && error.isRetryable) {
          notes.push(`${attempt.backend}: ${error.message}`)
          continue
        }
        throw error
      }
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
    return answer(response, request, context, {
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

/**
 * The upstream's answer for the client: the decision header (the policy's part before the
 * scorer's), fallback notes, the request id, usage read on the way for the quota ledger.
 * `decision` is null when the scorer decided and wrote the whole header itself.
 */
export async function answer(
  upstream: Response,
  request: EdgeRequest,
  context: Pick<ServeContext, 'requestId' | 'onUsage'>,
  routed: { decision: string | null; notes: readonly string[] },
): Promise<Response> {
  const headers = new Headers(upstream.headers)
  const below = headers.get('x-kinference-decision')
  if (routed.decision !== null)
    headers.set('x-kinference-decision', below ? `${routed.decision}; ${below}` : routed.decision)
  const fallback = [...routed.notes, ...(headers.get('x-kinference-fallback') ?? '').split('; ')]
    .filter(Boolean)
    .join('; ')
  if (fallback !== '') headers.set('x-kinference-fallback', asciiHeaderValue(fallback))
  headers.set('x-request-id', context.requestId)
  // Hop-by-hop, or no longer true once fetch has decoded and the edge re-frames the body.
  for (const name of [
    'content-length',
    'transfer-encoding',
    'connection',
    'keep-alive',
    'content-encoding',
  ])
    headers.delete(name)
  const served = upstream.ok
  const exact = Number(headers.get(promptTokensHeader))
  const promptTokens = Number.isInteger(exact) && exact > 0 ? exact : null
  const isSse = (headers.get('content-type') ?? '').includes('text/event-stream')
  if (isSse && upstream.body) {
    const body = tapSseUsage(upstream.body, {
      dropUsageChunk: !request.includeUsage,
      onEnd: (usage) => context.onUsage(usage, served, promptTokens),
    })
    return new Response(body, { status: upstream.status, headers })
  }
  // A body that breaks half-way (the scorer or its pod gone) is an upstream failure, not ours.
  const text = await upstream.text().catch((error: unknown) => {
    context.onUsage(null, false, promptTokens)
    throw new KinfError('upstream_error', 'the answer stopped upstream before it was complete', {
      cause: error,
    })
  })
  context.onUsage(served ? usageOfJson(text) : null, served, promptTokens)
  return new Response(text, { status: upstream.status, headers })
}
