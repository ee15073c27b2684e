import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import {
  type EdgeClaims,
  edgeHeaders,
  verifyEdgeRequest,
} from '../../shared/auth/edge-signature.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { InferenceContext } from './inference-context.ts'
import type { PoolRuntime } from './pool-runtime.ts'
import { readBody } from './read-body.ts'

/** A request as the edge sent it, read whole: what its signature covers, and its id. */
export interface SignedRequest {
  method: string
  path: string
  headers: (name: string) => string | undefined
  body: Buffer
  requestId: string
}

/** Reads the body (refusing more than `limit` bytes) and the parts the signature covers. */
export async function readSignedRequest(
  req: IncomingMessage,
  limit: number,
): Promise<SignedRequest> {
  const headers = (name: string) => {
    const value = req.headers[name]
    return Array.isArray(value) ? value[0] : value
  }
  return {
    method: req.method ?? 'POST',
    path: (req.url ?? '/').split('?')[0] ?? '/',
    headers,
    body: await readBody(req, limit),
    requestId: headers('x-request-id') ?? randomUUID(),
  }
}

const unsignedClaims: EdgeClaims = {
  tenant: '',
  labels: [],
  backends: [],
  allowBurst: false,
  detectorFailed: false,
}

/** The edge's claims, once its signature checks out; unsigned only where the config allows. */
export async function authenticate(
  context: InferenceContext,
  request: SignedRequest,
): Promise<EdgeClaims> {
  const { signingSecrets, allowUnsigned } = context.config
  if (signingSecrets.length === 0 && allowUnsigned) return unsignedClaims
  const nowSeconds = Date.now() / 1000
  const verified = await verifyEdgeRequest(signingSecrets, request, nowSeconds)
  if (verified.ok) {
    context.replays.admit(verified.nonce, verified.expiresAtSeconds, nowSeconds)
    return verified.claims
  }
  if (allowUnsigned && request.headers(edgeHeaders.signature) === undefined) return unsignedClaims
  throw new KinfError('unauthorized', `request not signed by the edge: ${verified.reason}`)
}

/** The pools the edge's allowed backends point at; all pools when it names none. */
export function allowedPools(
  context: InferenceContext,
  claims: EdgeClaims,
): readonly PoolRuntime[] {
  if (claims.backends.length === 0) return context.pools
  const ids = new Set(claims.backends.flatMap((backend) => context.backends[backend]?.pool ?? []))
  const pools = context.pools.filter((pool) => ids.has(pool.id))
  if (pools.length === 0)
    throw new KinfError('forbidden', 'none of the backends this request may use is served here')
  return pools
}
