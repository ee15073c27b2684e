import { constantTimeEqual } from './constant-time-equal.ts'

/**
 * The edge signs what it decided about a request, and the scorer refuses anything else:
 * HMAC-SHA256 over the body's hash, the tenant, its labels, the backends policy allows,
 * whether it may burst, whether a PII detector failed, and a timestamp. Web Crypto only, so the edge (workerd) and the
 * scorer (Node) share this file.
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
  nonce: 'x-kinference-nonce',
  signature: 'x-kinference-signature',
} as const

/**
 * v3 signs the deciding policy and rule, and a nonce per request (the scorer refuses a
 * nonce it has seen); an edge and a scorer must speak the same version.
 */
const signatureVersion = 'v3'

/**
 * Signatures older or newer than this are refused: the window within which a scorer must
 * remember nonces (replay protection), and the clock skew tolerated between edge and scorer.
 */
export const maxSkewSeconds = 30

const encoder = new TextEncoder()
/** A whole number as String(n) writes one: no sign, spaces, point, exponent or leading zero. */
const decimal = /^(?:0|[1-9]\d{0,15})$/

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('')
}

function canonical(
  method: string,
  path: string,
  bodyHash: string,
  claims: EdgeClaims,
  timestamp: number,
  nonce: string,
): string {
  return [
    signatureVersion,
    String(timestamp),
    nonce,
    method.toUpperCase(),
    path,
    bodyHash,
    claims.tenant,
    [...claims.labels].sort().join(','),
    [...claims.backends].sort().join(','),
    claims.allowBurst ? '1' : '0',
    claims.detectorFailed ? '1' : '0',
    claims.promptTokens === undefined ? '' : String(claims.promptTokens),
    claims.decidedBy?.policy ?? '',
    claims.decidedBy?.rule ?? '',
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
 * for every request sent, retries included (a random UUID).
 */
export async function signEdgeRequest(
  secret: string,
  request: { method: string; path: string; body: Uint8Array | string; nonce: string },
  claims: EdgeClaims,
  nowSeconds: number,
): Promise<Record<string, string>> {
  const timestamp = Math.floor(nowSeconds)
  const bodyHash = await sha256Hex(request.body)
  const signature = await hmac(
    secret,
    canonical(request.method, request.path, bodyHash, claims, timestamp, request.nonce),
  )
  return {
    [edgeHeaders.timestamp]: String(timestamp),
    [edgeHeaders.nonce]: request.nonce,
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
    [edgeHeaders.signature]: `${signatureVersion}=${signature}`,
  }
}

/** A verified request's claims, and what a replay guard needs: its nonce and when it expires. */
export type EdgeVerification =
  | { ok: true; claims: EdgeClaims; nonce: string; expiresAtSeconds: number }
  | { ok: false; reason: string }

/**
 * Checks a request's signature against any of `secrets` (several, so a secret can be
 * rotated without downtime). Expected failures are values, not exceptions.
 */
export async function verifyEdgeRequest(
  secrets: readonly string[],
  request: {
    method: string
    path: string
    body: Uint8Array
    headers: (name: string) => string | undefined
  },
  nowSeconds: number,
): Promise<EdgeVerification> {
  const header = request.headers(edgeHeaders.signature)
  if (!header) return { ok: false, reason: 'missing signature' }
  if (!header.startsWith(`${signatureVersion}=`))
    return {
      ok: false,
      reason: `unknown signature version (this scorer checks ${signatureVersion})`,
    }
  // Numbers as signEdgeRequest writes them, digits only: the signature covers their
  // canonical form, so " 17…", "17….0" or "1e3" would otherwise verify as well.
  const stamp = request.headers(edgeHeaders.timestamp) ?? ''
  const timestamp = decimal.test(stamp) ? Number(stamp) : Number.NaN
  if (!Number.isSafeInteger(timestamp)) return { ok: false, reason: 'missing or bad timestamp' }
  if (Math.abs(nowSeconds - timestamp) > maxSkewSeconds)
    return { ok: false, reason: 'timestamp outside the allowed window' }
  const nonce = request.headers(edgeHeaders.nonce)
  if (!nonce || nonce.length > 64) return { ok: false, reason: 'missing or bad nonce' }
  const list = (value: string | undefined) => (value ? value.split(',').filter(Boolean) : [])
  const claims: EdgeClaims = {
    tenant: request.headers(edgeHeaders.tenant) ?? '',
    labels: list(request.headers(edgeHeaders.labels)),
    backends: list(request.headers(edgeHeaders.backends)),
    allowBurst: request.headers(edgeHeaders.burst) === '1',
    detectorFailed: request.headers(edgeHeaders.detectorFailed) === '1',
  }
  const estimate = request.headers(edgeHeaders.promptTokens)
  if (estimate !== undefined) {
    const tokens = decimal.test(estimate) ? Number(estimate) : Number.NaN
    if (!Number.isSafeInteger(tokens)) return { ok: false, reason: 'bad prompt estimate' }
    claims.promptTokens = tokens
  }
  const policy = request.headers(edgeHeaders.policy)
  const rule = request.headers(edgeHeaders.rule)
  if ((policy === undefined) !== (rule === undefined))
    return { ok: false, reason: 'policy and rule come together' }
  if (policy !== undefined && rule !== undefined) claims.decidedBy = { policy, rule }
  const text = canonical(
    request.method,
    request.path,
    await sha256Hex(request.body),
    claims,
    timestamp,
    nonce,
  )
  const given = header.slice(signatureVersion.length + 1)
  const expiresAtSeconds = timestamp + maxSkewSeconds
  for (const secret of secrets) {
    if (constantTimeEqual(given, await hmac(secret, text)))
      return { ok: true, claims, nonce, expiresAtSeconds }
  }
  return { ok: false, reason: 'bad signature' }
}
