import type { IncomingMessage, ServerResponse } from 'node:http'
import { passThroughHeaders } from '../../../shared/attempts/pass-through-headers.ts'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
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
import { prepareRequest } from './prepare-request.ts'
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
 * looked up in the index once.
 */
export async function prepareInference(
  context: InferenceHandlerContext,
  kind: RequestKind,
  request: SignedRequest,
): Promise<{ claims: EdgeClaims; attempt: PoolAttempt }> {
  const claims = await authenticate(context, request)
  const pools = allowedPools(context, claims)
  const prepared = prepareRequest(
    request.requestId,
    kind,
    parseJson(request.body),
    pools,
    request.body.toString('utf8'),
  )
  const lookup = await prepared.pool.lookup(prepared.request)
  return { claims, attempt: { prepared, lookup } }
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
  const request = await readSignedRequest(context, req, res)
  const { claims, attempt } = await prepareInference(context, kind, request)
  const served = await serveOnPool(context, attempt, res, {
    requestId: request.requestId,
    startedMs,
    body: request.body,
    headers: passThroughHeaders(request.headers, request.requestId),
    allowBurst: claims.allowBurst,
    decidedBy: decidedByClaims(claims),
  })
  if (served.kind === 'saturated') answerSaturated(res, served.message)
}
