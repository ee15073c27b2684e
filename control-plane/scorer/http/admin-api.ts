import { z } from 'zod'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import type { InferenceContext } from '../serving/inference-context.ts'
import { prepareRequest } from '../serving/prepare-request.ts'

/** A lookup by token ids: the ids a pod's /tokenize answered, say, as the prompt. */
const TokenIdsLookup = z.strictObject({
  model: z.string().min(1),
  token_ids: z.array(z.int().min(0)).min(1),
  cache_salt: z.string().optional(),
})

/**
 * GET /admin/pods: each pod's health, load, index state and trust, drift, fitted TTFT
 * model, and the blocks it holds per non-GPU tier (`tiers`, medium → engine hashes; null
 * when tiers are not kept); per pool, its conditions (TokenizerReady, TokenizationAgrees)
 * and the requests late binding holds now and has held so far.
 */
export async function podsReport(context: InferenceContext) {
  const now = performance.now()
  const pools = await Promise.all(
    context.pools.map(async (pool) => {
      const reports = pool.router.podReports(now)
      const tiers = (await context.tiers?.counts(reports.map((report) => report.name))) ?? null
      return { pool, reports, tiers }
    }),
  )
  return {
    pools: pools.map(({ pool, reports, tiers }) => ({
      id: pool.id,
      name: pool.name,
      strategy: pool.router.strategy,
      conditions: pool.conditions(Date.now()),
      lateBinding: {
        enabled: pool.admission.enabled,
        held: pool.admission.held,
        heldTotal: pool.admission.heldTotal,
      },
      pods: reports.map((report, i) => ({
        ...report,
        endpoint: pool.endpoint(report.name),
        events: pool.ingestorCounters(report.name),
        tiers: tiers?.[i] ?? null,
      })),
    })),
  }
}

/**
 * The body of a lookup as the request it stands for: an OpenAI chat body (`messages`,
 * with `tools` and the rest as vLLM takes them), a completions body (`prompt`), or
 * `token_ids`, a completions prompt of ids. Anything else is a 400 naming the field.
 */
function lookupRequestOf(body: unknown): { kind: RequestKind; body: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new KinfError('invalid_request', 'the body must be a JSON object', { param: null })
  if ('token_ids' in body) {
    const parsed = TokenIdsLookup.safeParse(body)
    if (!parsed.success) {
      const param = parsed.error.issues[0]?.path.join('.') || null
      throw new KinfError('invalid_request', z.prettifyError(parsed.error), { param })
    }
    const { model, token_ids: prompt, cache_salt } = parsed.data
    return { kind: 'completion', body: { model, prompt, ...(cache_salt && { cache_salt }) } }
  }
  if ('messages' in body) return { kind: 'chat', body }
  if ('prompt' in body) return { kind: 'completion', body }
  throw new KinfError(
    'invalid_request',
    'give messages (a chat body), prompt (a completions body) or token_ids',
    { param: 'messages' },
  )
}

/**
 * POST /admin/lookup: the token ids the scorer computes for a request (a chat body with
 * its tools, a completions body, or token ids), what the index holds of them on every pod
 * of its pool, and the TTFT the scorer would predict, without sending anything. An
 * operator compares the ids with the pod's own POST /tokenize.
 */
export async function lookupReport(context: InferenceContext, body: unknown) {
  const request = lookupRequestOf(body)
  const prepared = prepareRequest('admin-lookup', request.kind, request.body, context.pools)
  const { pool, model } = prepared
  const { routing } = prepared.request
  const source = pool.serves(model)?.model.tokenizer ?? ''
  const tokenizer = pool.tokenizerState(source)
  const lookup = await pool.lookup(prepared.request)
  const route = pool.router.score(lookup, performance.now())
  return {
    pool: pool.name,
    model,
    tokenizer: {
      source,
      loaded: tokenizer.ok,
      error: tokenizer.ok ? null : tokenizer.error.message,
    },
    promptTokens: routing.promptTokens,
    /** True when the pool has no tokenizer: promptTokens is the edge's estimate. */
    estimated: prepared.estimated,
    tokenIds: prepared.promptIds,
    blocks: prepared.request.keys.length / 2,
    chosen: route.decision.pod,
    reason: route.decision.reason,
    pods: pool.router.podNames().map((name) => {
      const candidate = route.candidates.find((c) => c.name === name)
      return {
        pod: name,
        matchedBlocks: lookup.blocks.get(name) ?? 0,
        matchedTokens: pool.router.matchedTokens(lookup, name),
        trust: candidate?.trust ?? null,
        predictedTtftMs: route.predictedTtftMs.get(name) ?? null,
      }
    }),
  }
}
