import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { ChatMessage } from '../../shared/openai/chat-completion-request.ts'
import type { InferenceContext } from './inference-context.ts'
import { prepareRequest } from './prepare-request.ts'

const LookupRequest = z
  .strictObject({
    model: z.string().min(1),
    prompt: z.string().optional(),
    messages: z.array(ChatMessage).min(1).optional(),
    token_ids: z.array(z.int().min(0)).min(1).optional(),
  })
  .refine((r) => [r.prompt, r.messages, r.token_ids].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of prompt, messages, token_ids',
  })

/**
 * GET /admin/pods: each pod's health, load, index state and trust, drift, fitted TTFT
 * model; per pool, the requests late binding holds now and has held so far.
 */
export function podsReport(context: InferenceContext) {
  const now = performance.now()
  return {
    pools: context.pools.map((pool) => ({
      id: pool.id,
      name: pool.name,
      strategy: pool.router.strategy,
      lateBinding: {
        enabled: pool.admission.enabled,
        held: pool.admission.held,
        heldTotal: pool.admission.heldTotal,
      },
      pods: pool.router.podReports(now).map((report) => ({
        ...report,
        endpoint: pool.endpoint(report.name),
        events: pool.ingestorCounters(report.name),
      })),
    })),
  }
}

/**
 * POST /admin/lookup: what the index holds for a prompt on every pod of its pool, and the
 * TTFT the scorer would predict, without sending anything.
 */
export async function lookupReport(context: InferenceContext, body: unknown) {
  const parsed = LookupRequest.safeParse(body)
  if (!parsed.success) throw new KinfError('invalid_request', z.prettifyError(parsed.error))
  const { model, prompt, messages, token_ids: tokenIds } = parsed.data
  const kind = messages !== undefined ? 'chat' : 'completion'
  const request =
    messages !== undefined ? { model, messages } : { model, prompt: prompt ?? tokenIds }
  const prepared = prepareRequest('admin-lookup', kind, request, context.pools)
  const { pool } = prepared
  const { routing } = prepared.request
  const lookup = await pool.lookup(prepared.request)
  const route = pool.router.score(lookup, performance.now())
  return {
    pool: pool.name,
    model,
    promptTokens: routing.promptTokens,
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
