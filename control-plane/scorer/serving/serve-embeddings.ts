import type { IncomingMessage, ServerResponse } from 'node:http'
import { passThroughHeaders } from '../../../shared/attempts/pass-through-headers.ts'
import { parseJson } from '../http/read-body.ts'
import { allowedPools, authenticate, readSignedRequest } from '../http/signed-request.ts'
import { answerSaturated } from './admit-on-pool.ts'
import { decidedByClaims } from './handle-inference.ts'
import type { InferenceHandlerContext } from './inference-context.ts'
import { lookupInSpan, tokenizeInSpan } from './lookup-spans.ts'
import { prepareEmbedding } from './prepare-embedding.ts'
import { openRequestTrail } from './request-trail.ts'
import { serveOnPool } from './serve-on-pool.ts'

/**
 * POST /v1/embeddings, signed by the edge as it signs chat: the body counted for the pool
 * serving its model with task Embed (among those the edge allows), then served by the
 * least loaded pod of that pool (serveOnPool; the request has no block keys to match), its
 * answer passed through as the pod gave it, vectors and usage.
 */
export async function serveEmbeddings(
  context: InferenceHandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedMs = performance.now()
  const trail = openRequestTrail(context, req, res, startedMs)
  try {
    const request = await readSignedRequest(context, req, res)
    const { requestId } = request
    trail.identify(requestId)
    const claims = await authenticate(context, request)
    const pools = allowedPools(context, claims)
    const prepared = await tokenizeInSpan(trail.scope, { requestId, pool: null }, () =>
      prepareEmbedding(requestId, parseJson(request.body), pools, claims.tenant),
    )
    const attempt = await lookupInSpan(trail.scope, prepared, requestId, async () => {
      const lookup = await prepared.pool.lookup(prepared.request)
      return { prepared, lookup }
    })
    trail.note({
      ...(claims.tenant === '' ? {} : { tenant: claims.tenant }),
      model: prepared.model,
      pool: prepared.pool.id,
    })
    const served = await serveOnPool(context, attempt, res, {
      requestId,
      startedMs,
      body: request.body,
      headers: passThroughHeaders(request.headers, requestId),
      allowBurst: claims.allowBurst,
      decidedBy: decidedByClaims(claims),
      trail,
    })
    if (served.kind === 'saturated') answerSaturated(res, served.message)
  } catch (error) {
    trail.fail(error)
    throw error
  } finally {
    trail.done()
  }
}
