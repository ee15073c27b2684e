import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  type PoolEstimate,
  PoolEstimateRequest,
  type PoolEstimateResponse,
  type PoolEstimateResult,
} from '../../shared/scorer-api/pool-estimate.ts'
import type { InferenceContext } from './inference-context.ts'
import { prepareRequest } from './prepare-request.ts'
import { parseJson } from './read-body.ts'
import { authenticate, type SignedRequest } from './signed-request.ts'

/**
 * POST /v1/kinference/estimate, signed by the edge: for each target pool, the saturation,
 * the best pod's predicted TTFT for this very prompt, and its exact token count, so policy
 * can choose between backends (simple-to-cheaper, burst, batch on idle) before sending.
 * Nothing is dispatched and no pod's load changes.
 */
export async function estimatePools(
  context: InferenceContext,
  signed: SignedRequest,
): Promise<PoolEstimateResponse> {
  await authenticate(context, signed)
  const parsed = PoolEstimateRequest.safeParse(parseJson(signed.body))
  if (!parsed.success) throw new KinfError('invalid_request', z.prettifyError(parsed.error))
  const { kind, body: request, targets } = parsed.data
  const results: PoolEstimateResult[] = []
  for (const target of targets) {
    const pool = context.pools.find((p) => p.name === target.pool)
    if (!pool) {
      results.push({ ...target, estimate: null, error: `pool ${target.pool} is not served here` })
      continue
    }
    try {
      const prepared = prepareRequest('estimate', kind, { ...request, model: target.model }, [pool])
      const { router } = pool
      const lookup = await router.lookup(prepared.request)
      const route = router.score(lookup, performance.now())
      const pod = route.decision.pod
      const estimate: PoolEstimate = {
        ...(router.podNames().length === 0
          ? { saturation: 1, saturated: true }
          : router.saturation(route)),
        predictedTtftMs: pod === null ? null : (route.predictedTtftMs.get(pod) ?? null),
        promptTokens: prepared.request.routing.promptTokens,
        matchedTokens: pod === null ? 0 : router.matchedTokens(lookup, pod),
        pod,
      }
      results.push({ ...target, estimate, error: null })
    } catch (error) {
      results.push({ ...target, estimate: null, error: (error as Error).message })
    }
  }
  return { results }
}
