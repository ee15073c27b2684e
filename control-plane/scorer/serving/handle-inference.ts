import type { IncomingMessage, ServerResponse } from 'node:http'
import { passThroughHeaders } from '../../../shared/attempts/pass-through-headers.ts'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import type { TraceScope } from '../../../shared/tracing/in-span.ts'
import { parseJson } from '../http/read-body.ts'
import {
  allowedPools,
  authenticate,
  readSignedRequest,
  type SignedRequest,
} from '../http/signed-request.ts'
import type { DecidedBy } from '../state/log-decision.ts'
import { answerSaturated } from './admit-on-pool.ts'
import type { PoolAttempt } from './attempt-record.ts'
import type { InferenceHandlerContext } from './inference-context.ts'
import { lookupInSpan, tokenizeInSpan } from './lookup-spans.ts'
import { prepareRequest } from './prepare-request.ts'
import { openRequestTrail } from './request-trail.ts'
import { serveOnPool } from './serve-on-pool.ts'

/** What the edge's claims say of a request it decided: tenant, policy and rule, its one backend. */
export function decidedByClaims(claims: EdgeClaims): DecidedBy {
  return {
    tenant: claims.tenant === '' ? null : claims.tenant,
    policy: claims.decidedBy?.policy ?? null,
    rule: claims.decidedBy?.rule ?? null,
    backend: claims.backends.length === 1 ? (claims.backends[0] ?? null) : null,
  }
}

/**
 * Everything before a pod is chosen: the edge's signature checked, the body parsed and
 * tokenized for the pool serving its model (among those the edge allows), its blocks
 * looked up in the index once; each stage in its span under `scope` when tracing.
 */
export async function prepareInference(
  context: InferenceHandlerContext,
  kind: RequestKind,
  request: SignedRequest,
  scope?: TraceScope,
): Promise<{ claims: EdgeClaims; attempt: PoolAttempt }> {
  const claims = await authenticate(context, request)
  const pools = allowedPools(context, claims)
  const { requestId } = request
  const prepared = await tokenizeInSpan(scope, { requestId, pool: null }, () =>
    prepareRequest(requestId, kind, parseJson(request.body), pools, request.body.toString('utf8')),
  )
  return lookupInSpan(scope, prepared, requestId, async () => {
    const lookup = await prepared.pool.lookup(prepared.request)
    return { claims, attempt: { prepared, lookup }, lookup }
  })
}

/**
 * POST /v1/chat/completions and /v1/completions, signed by the edge, whose policy already
 * chose the backend: prepare once, then the best pod of its pool (see serveOnPool).
 */
export async function handleInference(
  context: InferenceHandlerContext,
  kind: RequestKind,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedMs = performance.now()
  const trail = openRequestTrail(context, req, res, startedMs)
  try {
    const request = await readSignedRequest(context, req, res)
    trail.identify(request.requestId)
    const { claims, attempt } = await prepareInference(context, kind, request, trail.scope)
    trail.note({
      ...(claims.tenant === '' ? {} : { tenant: claims.tenant }),
      model: attempt.prepared.model,
      pool: attempt.prepared.pool.id,
    })
    const served = await serveOnPool(context, attempt, res, {
      requestId: request.requestId,
      startedMs,
      body: request.body,
      headers: passThroughHeaders(request.headers, request.requestId),
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
