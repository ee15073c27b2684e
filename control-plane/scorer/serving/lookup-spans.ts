import type { Attributes } from '@opentelemetry/api'
import type { PoolLookup, RouteResult } from '../../../shared/routing/pool-router.ts'
import { inSpan, type TraceScope } from '../../../shared/tracing/in-span.ts'
import { stageAttribute, stageSpanName } from '../../../shared/tracing/stage-spans.ts'
import type { PreparedRequest } from './prepare-request.ts'
import { requestIdAttribute } from './request-trail.ts'

/** Which request, on which pool: what every stage span of a pool's preparation says. */
export interface PoolStageFacts {
  requestId: string
  /** The pool's id; null before the pool is known (a request naming its model). */
  pool: string | null
}

function stageAttributes(stage: 'tokenize' | 'index_lookup', facts: PoolStageFacts): Attributes {
  return {
    [stageAttribute]: stage,
    [requestIdAttribute]: facts.requestId,
    ...(facts.pool === null ? {} : { 'kinference.pool': facts.pool }),
  }
}

/**
 * Tokenizes a request for a pool in its `kinference.tokenize` span: the prompt's length,
 * and whether it is the edge's estimate (the pool cannot load the model's tokenizer).
 */
export function tokenizeInSpan(
  scope: TraceScope | undefined,
  facts: PoolStageFacts,
  tokenize: () => PreparedRequest,
): Promise<PreparedRequest> {
  return inSpan(
    scope,
    stageSpanName('tokenize'),
    { attributes: stageAttributes('tokenize', facts) },
    (span) => {
      const prepared = tokenize()
      span?.setAttributes({
        'kinference.pool': prepared.pool.id,
        'gen_ai.request.model': prepared.model,
        'kinference.prompt_tokens': prepared.request.routing.promptTokens,
        'kinference.prompt_blocks': prepared.request.keys.length,
        'kinference.tokenize.estimated': prepared.estimated,
      })
      return prepared
    },
  )
}

/**
 * Looks a prepared request up in the index (and scores it, where the caller does) in its
 * `kinference.index_lookup` span: how many pods were asked, and the pod it names (the
 * score's choice, else the pod holding the most) with the blocks and tokens it holds.
 */
export function lookupInSpan<T extends { lookup: PoolLookup; scored?: RouteResult }>(
  scope: TraceScope | undefined,
  prepared: PreparedRequest,
  requestId: string,
  work: () => Promise<T>,
): Promise<T> {
  return inSpan(
    scope,
    stageSpanName('index_lookup'),
    { attributes: stageAttributes('index_lookup', { requestId, pool: prepared.pool.id }) },
    async (span) => {
      const found = await work()
      span?.setAttributes(lookupAttributes(prepared, found.lookup, found.scored))
      return found
    },
  )
}

function lookupAttributes(
  prepared: PreparedRequest,
  lookup: PoolLookup,
  scored: RouteResult | undefined,
): Attributes {
  const { blockSize, promptTokens } = prepared.request.routing
  let pod = scored?.decision.pod ?? null
  if (pod === null) {
    let most = -1
    for (const [name, blocks] of lookup.blocks) if (blocks > most) [pod, most] = [name, blocks]
  }
  const blocks = pod === null ? 0 : (lookup.blocks.get(pod) ?? 0)
  const matched =
    scored?.decision.scores.find((score) => score.pod === pod)?.cachedTokens ??
    Math.min(blocks * blockSize, promptTokens)
  return {
    'kinference.index.pods': lookup.blocks.size,
    'kinference.prompt_blocks': lookup.request.keys.length,
    ...(pod === null ? {} : { 'kinference.pod': pod }),
    'kinference.cache.matched_blocks': blocks,
    'kinference.cache.matched_tokens': matched,
  }
}
