import type { IncomingMessage, ServerResponse } from 'node:http'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import { validRequestId } from '../../../shared/openai/request-id.ts'
import { parseJson } from '../http/read-body.ts'
import {
  allowedPools,
  authenticate,
  readSignedRequest,
  type SignedRequest,
} from '../http/signed-request.ts'
import type { InferenceContext } from './inference-context.ts'
import { prepareRequest } from './prepare-request.ts'
import { type DecidedBy, type PoolAttempt, serveOnPool } from './serve-on-pool.ts'

const passThroughHeaders = ['traceparent', 'tracestate', 'accept']
/** Trace context and accept as they are meant to be: short printable text. */
const plainHeaderValue = /^[\x20-\x7e]{0,512}$/

/**
 * The request headers a pod gets as the client sent them, when they are short printable
 * text (a pod answers a bare 431 to headers past about 16 KiB), and an x-request-id always:
 * the client's when it is a request id (validRequestId), else the request's own.
 */
export function passThrough(request: SignedRequest): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const name of passThroughHeaders) {
    const value = request.headers(name)
    if (value !== undefined && plainHeaderValue.test(value)) headers[name] = value
  }
  headers['x-request-id'] = validRequestId(request.headers('x-request-id')) ?? request.requestId
  return headers
}

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
  context: InferenceContext,
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
  context: InferenceContext,
  kind: RequestKind,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedMs = performance.now()
  const request = await readSignedRequest(context, req, res)
  const { claims, attempt } = await prepareInference(context, kind, request)
  await serveOnPool(context, attempt, res, {
    requestId: request.requestId,
    startedMs,
    body: request.body,
    headers: passThrough(request),
    allowBurst: claims.allowBurst,
    decidedBy: decidedByClaims(claims),
  })
}
