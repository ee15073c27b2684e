import type { Next } from 'hono'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { rateLimitHeaders } from '../../../shared/openai/rate-limit-headers.ts'
import { admitQuota, type QuotaDeps, quotaState, settleQuota } from '../admit-quota.ts'
import type { ChargeBasis } from '../request-charge.ts'
import { type EdgeStage, edgeStage, type StageContext } from './edge-stage.ts'
import { keepAlive } from './keep-alive.ts'
import type { StageTrace } from './stage-span.ts'
import { withHeaders } from './with-headers.ts'

/**
 * Stage 5: quota admission on an estimate (prompt + sequences × max_tokens, or the default
 * output when the request sets no max_tokens), a 429 when the tenant is over a limit. The
 * stages after it settle the quota on what the answer used (QuotaGrant.charge); a request
 * they refuse or fail used nothing, unless its client left before the answer, when its
 * prompt was read (or being read) upstream. Every answer after it carries OpenAI's
 * x-ratelimit-* headers for the tenant's quotas (shared/openai/rate-limit-headers.ts).
 */
export function admitRequest(
  deps: QuotaDeps,
  defaultMaxTokens: number,
): EdgeStage<'request' | 'terms', 'admitted' | 'rateLimits'> {
  return edgeStage(
    'admitRequest',
    { reads: ['request', 'terms'], sets: ['admitted', 'rateLimits'], span: 'quota' },
    async (c, next, trace) => {
      const request = c.get('request')
      const reservedOutput = request.sequences * (request.maxTokens ?? defaultMaxTokens)
      const basis = { promptTokens: request.promptTokens, reservedOutput }
      await admitOn(
        c as unknown as GrantContext,
        deps,
        { tenant: request.tenant, basis },
        next,
        trace,
      )
      return undefined
    },
  )
}

/** What admitOn reads and sets of a stage's context. */
export type GrantContext = StageContext<'terms' | 'admitted' | 'rateLimits'>

/**
 * Admits a request of `tenant` on `basis` (its prompt and the output reserved for it), sets
 * its grant and rate-limit headers, runs the stages after it, and settles what they did not:
 * shared by every route that spends tokens (admitRequest, admitEmbedding).
 */
export async function admitOn(
  c: GrantContext,
  deps: QuotaDeps,
  { tenant, basis }: { tenant: string; basis: ChargeBasis },
  next: Next,
  trace: StageTrace | undefined,
): Promise<void> {
  const { quotas } = c.get('terms')
  const estimatedTokens = basis.promptTokens + basis.reservedOutput
  const admission = await admitQuota(deps, tenant, quotas, estimatedTokens)
  trace?.span.setAttributes({
    'kinference.quota.estimated_tokens': estimatedTokens,
    'kinference.quota.admitted': admission.admitted,
  })
  const state = await quotaState(deps, tenant, admission)
  const refusal = admission.admitted ? null : admission
  const limits = rateLimitHeaders(quotas, state, deps.nowMs(), refusal)
  // Read by answerError too, for the answer of a request refused here or later.
  c.set('rateLimits', limits)
  if (!admission.admitted) {
    deps.metrics.inc('quota_exceeded', { limit: admission.limit })
    throw new KinfError('rate_limited', admission.message, {
      retryAfterSeconds: admission.retryAfterSeconds,
      openAiCode: admission.limit === 'tokens' ? 'tokens_per_minute' : 'requests_per_minute',
    })
  }
  let settled = false
  const charge = (tokens: number | Promise<number>) => {
    if (settled) return
    settled = true
    const work = Promise.resolve(tokens).then((actual) =>
      settleQuota(deps, tenant, quotas, admission.reservation, estimatedTokens, actual),
    )
    keepAlive(c, work)
  }
  c.set('admitted', { basis, estimatedTokens, charge })
  const unused = () => charge(c.req.raw.signal.aborted ? basis.promptTokens : 0)
  try {
    await next()
  } catch (error) {
    // Hono hands what is not an Error on as thrown.
    unused()
    throw error
  }
  // Hono answers a later stage's error (onError) before this one resumes, and says so here.
  if (c.error) unused()
  else withHeaders(c, limits)
}
