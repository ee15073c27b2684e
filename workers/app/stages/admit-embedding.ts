import type { QuotaDeps } from '../admit-quota.ts'
import { admitOn, type GrantContext } from './admit-request.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/**
 * admitRequest's counterpart for POST /v1/embeddings: admitted on the edge's estimate of the
 * tokens embedded (nothing is generated, so no output is reserved), settled on the pod's
 * usage.prompt_tokens, in the same buckets as the tenant's completions.
 */
export function admitEmbedding(
  deps: QuotaDeps,
): EdgeStage<'embedding' | 'terms', 'admitted' | 'rateLimits'> {
  return edgeStage(
    'admitEmbedding',
    { reads: ['embedding', 'terms'], sets: ['admitted', 'rateLimits'], span: 'quota' },
    async (c, next, trace) => {
      const { tenant, promptTokens } = c.get('embedding')
      const basis = { promptTokens, reservedOutput: 0 }
      await admitOn(c as unknown as GrantContext, deps, { tenant, basis }, next, trace)
      return undefined
    },
  )
}
