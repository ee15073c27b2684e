import type { SnapshotProvider } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { ChatCompletionRequest } from '../../shared/openai/chat-completion-request.ts'
import { estimatePromptTokens } from '../../shared/openai/estimate-prompt-tokens.ts'
import type { TraceScope } from '../../shared/tracing/in-span.ts'
import { answer } from './answer-upstream.ts'
import { type ExternalAttemptLog, externalAttemptLog } from './edge-decision-log.ts'
import type { EdgeDeps } from './edge-deps.ts'
import { reserveProvider } from './provider-budget.ts'
import { startProviderSpan } from './provider-span.ts'
import type { EdgeRequest } from './read-edge-request.ts'
import { type ChargeBasis, localCharge, type UpstreamOutcome } from './request-charge.ts'
import { withUsage } from './upstream-body.ts'

/** What an attempt works with, whichever backend makes it (serve-decision.ts adds the rest). */
export interface AttemptContext {
  /** The request id passed upstream and echoed to the client. */
  requestId: string
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
  /** Where an attempt's span goes (under the serve stage's), when the request is traced. */
  trace?: TraceScope
}

export interface ExternalAttempt {
  backend: string
  providerId: string
  provider: SnapshotProvider
  model: string
  /** The decision header for this attempt. */
  decision: string
  /**
   * What the decision log names beside the attempt, when the edge logs it (EdgeDeps.decisions,
   * edge-decision-log.ts); null or absent when the scorer logged it when handing it over.
   */
  logged?: { policy: string; rule: string; edgeId: string } | null
}

/**
 * One attempt on an external provider: its account's budget reserved, the call made, and
 * the answer metered. What the provider processed is charged to the tenant and to the
 * provider's account alike: the answer's usage, or, when the client left before the end,
 * the provider's own count of the prompt and of what it had generated (ExternalPort's
 * countTokens), the edge's estimate when it cannot count. Throws the provider's KinfError
 * (the caller decides whether to try the next attempt), or a budget refusal as a value.
 */
export async function serveExternal(
  deps: EdgeDeps,
  request: EdgeRequest,
  attempt: ExternalAttempt,
  context: AttemptContext,
  notes: readonly string[],
): Promise<{ response: Response } | { refused: string; error: KinfError }> {
  const budget = await reserveProvider(
    deps,
    attempt.providerId,
    attempt.provider,
    context.estimatedTokens,
  )
  if (!budget.admitted)
    return {
      refused: `provider ${budget.limit} limit reached`,
      error: new KinfError('rate_limited', `${attempt.providerId}: ${budget.message}`, {
        retryAfterSeconds: budget.retryAfterSeconds,
        openAiCode: 'provider_limit',
      }),
    }
  const body = withUsage(request) as ChatCompletionRequest
  const span = startProviderSpan(context.trace, request, attempt)
  const journal = attemptJournal(deps, request, attempt, context)
  // What the provider's answer or failure said, for the journal's end.
  let seen: { status: number | null; firstEventAtMs: number | null } = {
    status: null,
    firstEventAtMs: null,
  }
  // The provider's account is settled for every attempt; the tenant once, for the attempt
  // its request ended on (a failed attempt may be followed by another).
  const meter = (outcome: UpstreamOutcome, ends = true) => {
    span.ended(outcome)
    journal?.ended({
      atMs: deps.nowMs(),
      outcome,
      ...seen,
      clientGone: context.signal?.aborted === true,
    })
    const tokens = providerCharge(deps, request, attempt, body, outcome, context)
    context.background(
      Promise.resolve(tokens)
        .then((used) => budget.settle(used))
        .catch((error: unknown) =>
          deps.log(`provider budget settle failed: ${(error as Error).message}`, {
            level: 'warn',
            request_id: context.requestId,
          }),
        ),
    )
    if (ends) context.charge(tokens)
  }
  let response: Response
  journal?.called(deps.nowMs())
  try {
    response = await deps.external.complete(attempt.provider, attempt.model, body, {
      requestedModel: request.model,
      requestId: context.requestId,
      ...(context.signal ? { signal: context.signal } : {}),
    })
  } catch (error) {
    // Gone before an answer: the provider read the prompt (and bills it), and the request
    // ends here. Failed: nothing was generated, and the next attempt may serve it.
    span.failed(error)
    seen = { status: KinfError.isInstance(error) ? error.status : null, firstEventAtMs: null }
    if (context.signal?.aborted) meter({ kind: 'unanswered' })
    else meter({ kind: 'refused' }, false)
    throw error
  }
  // A stream's answer comes after its first event (bedrock-upstream.ts): its TTFT.
  const streamed = (response.headers.get('content-type') ?? '').includes('text/event-stream')
  seen = { status: response.status, firstEventAtMs: streamed && response.ok ? deps.nowMs() : null }
  return {
    response: await answer(
      response,
      request,
      {
        requestId: context.requestId,
        meter: (outcome) => meter(outcome),
        collectText: true,
        decisionHeaders: context.decisionHeaders,
      },
      { decision: attempt.decision, notes },
    ),
  }
}

/**
 * Tokens a provider used: its usage when it answered, nothing when it refused, and when
 * the answer was cut or never came, its count of the prompt plus the text it had sent.
 */
function providerCharge(
  deps: EdgeDeps,
  request: EdgeRequest,
  attempt: ExternalAttempt,
  body: ChatCompletionRequest,
  outcome: UpstreamOutcome,
  context: AttemptContext,
): number | Promise<number> {
  // A whole answer or a refusal is charged as a pool's is; only a cut one needs counting.
  if (outcome.kind === 'refused' || outcome.kind === 'answered')
    return localCharge(outcome, context.basis)
  const text = outcome.kind === 'cut' ? (outcome.metered?.text ?? '') : ''
  const estimate = request.promptTokens + estimatePromptTokens(text)
  return deps.external
    .countTokens(attempt.provider, attempt.model, body, text)
    .then((counted) => counted ?? estimate)
}

/** The decision log's entries of this attempt, when the edge is the one to write them. */
function attemptJournal(
  deps: EdgeDeps,
  request: EdgeRequest,
  attempt: ExternalAttempt,
  context: AttemptContext,
): ExternalAttemptLog | null {
  if (!deps.decisions || !attempt.logged) return null
  const { policy, rule, edgeId } = attempt.logged
  return externalAttemptLog(
    deps.decisions,
    {
      edgeId,
      requestId: context.requestId,
      tenant: request.tenant,
      policy,
      rule,
      backend: attempt.backend,
      provider: attempt.providerId,
      model: attempt.model,
      promptTokens: context.basis.promptTokens,
    },
    (error) =>
      deps.log(`decision log: ${(error as Error).message}; entry dropped`, {
        level: 'warn',
        request_id: context.requestId,
      }),
  )
}
