import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  type EdgeClaims,
  edgeHeaders,
  type SignedBody,
  verifyEdgeBody,
  verifyEdgeHeaders,
  verifyEdgeRequest,
} from '../../../shared/auth/edge-signature.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import type { InferenceContext } from '../serving/inference-context.ts'
import { readBody, readExactBody } from './read-body.ts'

/** A request as the edge sent it, read whole: what its signature covers, and its id. */
export interface SignedRequest {
  method: string
  path: string
  headers: (name: string) => string | undefined
  body: Buffer
  /**
   * The edge's signed request id, else one this scorer made: what keys the request here
   * (the router's in-flight state, the decision log). Never the client's x-request-id,
   * which any tenant can set to another's.
   */
  requestId: string
  /**
   * The edge's claims, when readSignedRequest has checked them (the headers before the
   * body, then the body against its hash). Absent: authenticate checks the whole request.
   */
  claims?: EdgeClaims
}

type Context = Pick<InferenceContext, 'config' | 'replays'>

/**
 * Reads a request the edge sent. What its headers condemn (no or a bad signature, a stale
 * timestamp, a replayed nonce, no content-length, a body over maxBodyBytes) is refused
 * before a byte of the body is read; then exactly the signed length is read and checked
 * against its signed hash. A refusal closes the connection (`connection: close`): Node
 * then ends it once the answer is sent, instead of reading the rest of the upload.
 */
export async function readSignedRequest(
  context: Context,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<SignedRequest> {
  const headers = (name: string) => {
    const value = req.headers[name]
    return Array.isArray(value) ? value[0] : value
  }
  const target = {
    method: req.method ?? 'POST',
    path: (req.url ?? '/').split('?')[0] ?? '/',
    headers,
  }
  try {
    const { claims, body: signed } = await authenticateHeaders(context, target)
    const limit = context.config.maxBodyBytes
    const declared = signed?.length ?? Number(headers('content-length'))
    if (declared > limit)
      throw new KinfError(
        'payload_too_large',
        `request body of ${declared} bytes is over the ${limit}-byte limit`,
      )
    const body = signed ? await readExactBody(req, signed.length) : await readBody(req, limit)
    if (signed) {
      const checked = await verifyEdgeBody(signed, body)
      if (!checked.ok) throw notSigned(checked.reason)
    }
    return { ...target, body, requestId: claims.requestId ?? randomUUID(), claims }
  } catch (error) {
    if (!res.headersSent) res.setHeader('connection', 'close')
    throw error
  }
}

const unsignedClaims: EdgeClaims = {
  tenant: '',
  labels: [],
  backends: [],
  allowBurst: false,
  detectorFailed: false,
}

/**
 * The edge's claims and what its body must be, from the headers alone; unsigned (no body
 * to check) only where the config allows. Admits the nonce: the same headers again are a
 * replay, whether or not this body ever arrives.
 */
async function authenticateHeaders(
  context: Context,
  target: Pick<SignedRequest, 'method' | 'path' | 'headers'>,
): Promise<{ claims: EdgeClaims; body: SignedBody | null }> {
  const { signingSecrets, allowUnsigned } = context.config
  if (signingSecrets.length === 0 && allowUnsigned) return { claims: unsignedClaims, body: null }
  const nowSeconds = Date.now() / 1000
  const verified = await verifyEdgeHeaders(signingSecrets, target, nowSeconds)
  if (verified.ok) {
    admitNonce(context, verified, nowSeconds)
    return { claims: verified.claims, body: verified.body }
  }
  if (allowUnsigned && target.headers(edgeHeaders.signature) === undefined)
    return { claims: unsignedClaims, body: null }
  throw notSigned(verified.reason)
}

/**
 * The edge's claims: those readSignedRequest checked, or, for a request built whole in
 * memory (the scorer's benchmark), its headers and body checked now.
 */
export async function authenticate(context: Context, request: SignedRequest): Promise<EdgeClaims> {
  if (request.claims) return request.claims
  const { signingSecrets, allowUnsigned } = context.config
  if (signingSecrets.length === 0 && allowUnsigned) return unsignedClaims
  const nowSeconds = Date.now() / 1000
  const verified = await verifyEdgeRequest(signingSecrets, request, nowSeconds)
  if (verified.ok) {
    admitNonce(context, verified, nowSeconds)
    return verified.claims
  }
  if (allowUnsigned && request.headers(edgeHeaders.signature) === undefined) return unsignedClaims
  throw notSigned(verified.reason)
}

function admitNonce(
  context: Context,
  verified: { nonce: string; expiresAtSeconds: number },
  nowSeconds: number,
): void {
  const admitted = context.replays.admit(verified.nonce, verified.expiresAtSeconds, nowSeconds)
  if (admitted === 'replayed') throw notSigned('replayed nonce')
  if (admitted === 'full')
    throw new KinfError('upstream_unavailable', 'too many signed requests in flight to check')
}

function notSigned(reason: string): KinfError {
  return new KinfError('unauthorized', `request not signed by the edge: ${reason}`)
}

/** The pools the edge's allowed backends point at; all pools when it names none. */
export function allowedPools(
  context: Pick<InferenceContext, 'pools' | 'backends'>,
  claims: EdgeClaims,
): readonly PoolRuntime[] {
  if (claims.backends.length === 0) return context.pools
  const ids = new Set(claims.backends.flatMap((backend) => context.backends[backend]?.pool ?? []))
  const pools = context.pools.filter((pool) => ids.has(pool.id))
  if (pools.length === 0)
    throw new KinfError('forbidden', 'none of the backends this request may use is served here')
  return pools
}
