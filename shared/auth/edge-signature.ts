import { KinfError } from '../errors/kinf-error.ts'
import { requestIdPattern } from '../openai/request-id.ts'
import { constantTimeEqual } from './constant-time-equal.ts'

/**
 * The edge signs what it decided about a request, and the scorer refuses anything else:
 * HMAC-SHA256 over the body's hash and length, the tenant, its labels, the backends policy
 * allows, whether it may burst, whether a PII detector failed, the edge's request id, a
 * timestamp and a nonce. Everything signed travels in headers, so the scorer checks a
 * request before reading a byte of its body (verifyEdgeHeaders), then the body against
 * its signed hash (verifyEdgeBody). Web Crypto only, so the edge (workerd) and the scorer
 * (Node) share this file.
 */
export interface EdgeClaims {
  tenant: string
  labels: readonly string[]
  /** GatewayBackends the policy allows for this request; empty = any local backend. */
  backends: readonly string[]
  /** Policy allows an external burst: the scorer may answer "saturated" instead of queueing. */
  allowBurst: boolean
  /**
   * A PII detector failed on this request: policy treats it as carrying every constrained
   * label. Absent means false.
   */
  detectorFailed?: boolean
  /**
   * The edge's estimate of the prompt's length, for policy rules on it until a pool's
   * tokenizer counts exactly. Absent: unknown.
   */
  promptTokens?: number
  /**
   * The policy and rule that chose this request's backend at the edge, for the scorer's
   * decision log. Absent when the edge did not decide (the scorer evaluates the policy).
   */
  decidedBy?: { policy: string; rule: string }
  /**
   * The edge's id for this request (1 to 128 printable ASCII characters, requestIdPattern):
   * what the scorer keys the request by, in its routing and its decision log. Absent: the
   * scorer makes its own.
   */
  requestId?: string
  /**
   * The client's TTFT objective in ms (its x-kinference-slo-ttft-ms, checked by the edge),
   * for the policy the scorer evaluates; the rule's serviceLevel decides whether it counts.
   * Absent: the client named none.
   */
  sloTtftMs?: number
}

export const edgeHeaders = {
  timestamp: 'x-kinference-timestamp',
  tenant: 'x-kinference-tenant',
  labels: 'x-kinference-labels',
  backends: 'x-kinference-backends',
  burst: 'x-kinference-burst',
  detectorFailed: 'x-kinference-detector-failed',
  promptTokens: 'x-kinference-prompt-estimate',
  policy: 'x-kinference-policy',
  rule: 'x-kinference-rule',
  requestId: 'x-kinference-request-id',
  sloTtftMs: 'x-kinference-slo-ttft-ms',
  bodySha256: 'x-kinference-body-sha256',
  nonce: 'x-kinference-nonce',
  signature: 'x-kinference-signature',
} as const

/**
 * v4 signs the body's SHA-256 and length (its content-length) instead of reading the body
 * to hash it, and the edge's request id: a scorer refuses an unsigned or forged request
 * from its headers alone. v3 signed the hash of a body the scorer had to read first. An
 * edge and a scorer must speak the same version: each refuses the other's.
 */
const signatureVersion = 'v4'

/**
 * Signatures older or newer than this are refused: the window within which a scorer must
 * remember nonces (replay protection), and the clock skew tolerated between edge and scorer.
 */
export const maxSkewSeconds = 30

const encoder = new TextEncoder()
/** A whole number as String(n) writes one: no sign, spaces, point, exponent or leading zero. */
const decimal = /^(?:0|[1-9]\d{0,15})$/
/** A SHA-256, as sha256Hex and the HMAC write it. */
const sha256Text = /^[0-9a-f]{64}$/

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** What the signature says of the body, checked once it is read (verifyEdgeBody). */
export interface SignedBody {
  sha256: string
  /** Bytes: the request's content-length. */
  length: number
}

function canonical(
  request: { method: string; path: string; nonce: string; timestamp: number },
  body: SignedBody,
  claims: EdgeClaims,
): string {
  return [
    signatureVersion,
    String(request.timestamp),
    request.nonce,
    request.method.toUpperCase(),
    request.path,
    body.sha256,
    String(body.length),
    claims.tenant,
    [...claims.labels].sort().join(','),
    [...claims.backends].sort().join(','),
    claims.allowBurst ? '1' : '0',
    claims.detectorFailed ? '1' : '0',
    claims.promptTokens === undefined ? '' : String(claims.promptTokens),
    claims.decidedBy?.policy ?? '',
    claims.decidedBy?.rule ?? '',
    claims.requestId ?? '',
    // One more line only when there is an objective: requests without one sign as before.
    ...(claims.sloTtftMs === undefined ? [] : [String(claims.sloTtftMs)]),
  ].join('\n')
}

async function hmac(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  return hex(await crypto.subtle.sign('HMAC', key, encoder.encode(text)))
}

export async function sha256Hex(body: Uint8Array | string): Promise<string> {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body
  return hex(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>))
}

/**
 * The headers the edge adds to a request it forwards to the scorer. `nonce` must be new
 * for every request sent, retries included (a random UUID). The request must go with a
 * content-length of the body's bytes, as fetch sends a string or bytes body, and exactly
 * those bytes (a string is signed as its UTF-8).
 */
export async function signEdgeRequest(
  secret: string,
  request: { method: string; path: string; body: Uint8Array | string; nonce: string },
  claims: EdgeClaims,
  nowSeconds: number,
): Promise<Record<string, string>> {
  if (claims.requestId !== undefined && !requestIdPattern.test(claims.requestId))
    throw new KinfError(
      'internal',
      'an edge request id must be 1 to 128 printable ASCII characters',
    )
  const timestamp = Math.floor(nowSeconds)
  const bytes = typeof request.body === 'string' ? encoder.encode(request.body) : request.body
  const body = { sha256: await sha256Hex(bytes), length: bytes.length }
  const signature = await hmac(secret, canonical({ ...request, timestamp }, body, claims))
  return {
    [edgeHeaders.timestamp]: String(timestamp),
    [edgeHeaders.nonce]: request.nonce,
    [edgeHeaders.bodySha256]: body.sha256,
    [edgeHeaders.tenant]: claims.tenant,
    [edgeHeaders.labels]: claims.labels.join(','),
    [edgeHeaders.backends]: claims.backends.join(','),
    [edgeHeaders.burst]: claims.allowBurst ? '1' : '0',
    [edgeHeaders.detectorFailed]: claims.detectorFailed ? '1' : '0',
    ...(claims.promptTokens === undefined
      ? {}
      : { [edgeHeaders.promptTokens]: String(claims.promptTokens) }),
    ...(claims.decidedBy === undefined
      ? {}
      : {
          [edgeHeaders.policy]: claims.decidedBy.policy,
          [edgeHeaders.rule]: claims.decidedBy.rule,
        }),
    ...(claims.requestId === undefined ? {} : { [edgeHeaders.requestId]: claims.requestId }),
    ...(claims.sloTtftMs === undefined
      ? {}
      : { [edgeHeaders.sloTtftMs]: String(claims.sloTtftMs) }),
    [edgeHeaders.signature]: `${signatureVersion}=${signature}`,
  }
}

/**
 * A request whose headers verified: its claims, what a replay guard needs (its nonce and
 * when it expires), and what its body must be.
 */
export type EdgeVerification =
  | { ok: true; claims: EdgeClaims; nonce: string; expiresAtSeconds: number; body: SignedBody }
  | { ok: false; reason: string }

type Headers = (name: string) => string | undefined

/**
 * Checks a request's signature from its headers alone, before its body is read: version,
 * timestamp, nonce, content-length, body hash, claims, and the HMAC against any of
 * `secrets` (several, so a secret can be rotated without downtime). The body must then be
 * checked with verifyEdgeBody. Expected failures are values, not exceptions.
 */
export async function verifyEdgeHeaders(
  secrets: readonly string[],
  request: { method: string; path: string; headers: Headers },
  nowSeconds: number,
): Promise<EdgeVerification> {
  const { headers } = request
  const header = headers(edgeHeaders.signature)
  if (!header) return { ok: false, reason: 'missing signature' }
  if (!header.startsWith(`${signatureVersion}=`))
    return {
      ok: false,
      reason: `unknown signature version (this scorer checks ${signatureVersion})`,
    }
  const given = header.slice(signatureVersion.length + 1)
  if (!sha256Text.test(given)) return { ok: false, reason: 'malformed signature' }
  // Numbers as signEdgeRequest writes them, digits only: the signature covers their
  // canonical form, so " 17…", "17….0" or "1e3" would otherwise verify as well.
  const timestamp = wholeNumber(headers(edgeHeaders.timestamp))
  if (timestamp === null) return { ok: false, reason: 'missing or bad timestamp' }
  if (Math.abs(nowSeconds - timestamp) > maxSkewSeconds)
    return { ok: false, reason: 'timestamp outside the allowed window' }
  const nonce = headers(edgeHeaders.nonce)
  if (!nonce || nonce.length > 64) return { ok: false, reason: 'missing or bad nonce' }
  const length = wholeNumber(headers('content-length'))
  if (length === null) return { ok: false, reason: 'missing or bad content-length' }
  const sha256 = headers(edgeHeaders.bodySha256) ?? ''
  if (!sha256Text.test(sha256)) return { ok: false, reason: 'missing or bad body hash' }
  const claims = claimsOf(headers)
  if (typeof claims === 'string') return { ok: false, reason: claims }
  const body = { sha256, length }
  const text = canonical({ ...request, nonce, timestamp }, body, claims)
  const expiresAtSeconds = timestamp + maxSkewSeconds
  for (const secret of secrets) {
    if (constantTimeEqual(given, await hmac(secret, text)))
      return { ok: true, claims, nonce, expiresAtSeconds, body }
  }
  return { ok: false, reason: 'bad signature' }
}

/** Checks a body, read whole, against what its verified headers signed. */
export async function verifyEdgeBody(
  signed: SignedBody,
  body: Uint8Array,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (body.length !== signed.length)
    return { ok: false, reason: 'body length differs from its signed content-length' }
  if (!constantTimeEqual(await sha256Hex(body), signed.sha256))
    return { ok: false, reason: 'body differs from its signed hash' }
  return { ok: true }
}

/**
 * A whole request in memory, headers then body (verifyEdgeHeaders, verifyEdgeBody). With
 * no content-length header the body's own length stands for it, as HTTP would send it.
 */
export async function verifyEdgeRequest(
  secrets: readonly string[],
  request: { method: string; path: string; body: Uint8Array; headers: Headers },
  nowSeconds: number,
): Promise<EdgeVerification> {
  const headers: Headers = (name) =>
    request.headers(name) ?? (name === 'content-length' ? String(request.body.length) : undefined)
  const verified = await verifyEdgeHeaders(secrets, { ...request, headers }, nowSeconds)
  if (!verified.ok) return verified
  const body = await verifyEdgeBody(verified.body, request.body)
  return body.ok ? verified : body
}

function wholeNumber(text: string | undefined): number | null {
  const value = text !== undefined && decimal.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(value) ? value : null
}

/** The claims as the headers carry them, or why they cannot be read. */
function claimsOf(headers: Headers): EdgeClaims | string {
  const list = (value: string | undefined) => (value ? value.split(',').filter(Boolean) : [])
  const claims: EdgeClaims = {
    tenant: headers(edgeHeaders.tenant) ?? '',
    labels: list(headers(edgeHeaders.labels)),
    backends: list(headers(edgeHeaders.backends)),
    allowBurst: headers(edgeHeaders.burst) === '1',
    detectorFailed: headers(edgeHeaders.detectorFailed) === '1',
  }
  const estimate = headers(edgeHeaders.promptTokens)
  if (estimate !== undefined) {
    const tokens = wholeNumber(estimate)
    if (tokens === null) return 'bad prompt estimate'
    claims.promptTokens = tokens
  }
  const policy = headers(edgeHeaders.policy)
  const rule = headers(edgeHeaders.rule)
  if ((policy === undefined) !== (rule === undefined)) return 'policy and rule come together'
  if (policy !== undefined && rule !== undefined) claims.decidedBy = { policy, rule }
  const requestId = headers(edgeHeaders.requestId)
  if (requestId !== undefined) {
    if (!requestIdPattern.test(requestId)) return 'bad request id'
    claims.requestId = requestId
  }
  const slo = headers(edgeHeaders.sloTtftMs)
  if (slo !== undefined) {
    const ms = wholeNumber(slo)
    if (ms === null || ms === 0) return 'bad TTFT objective'
    claims.sloTtftMs = ms
  }
  return claims
}
