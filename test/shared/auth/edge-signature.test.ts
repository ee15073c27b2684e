import { describe, expect, it } from 'vitest'
import {
  type EdgeClaims,
  sha256Hex,
  signEdgeRequest,
  verifyEdgeBody,
  verifyEdgeHeaders,
  verifyEdgeRequest,
} from '../../../shared/auth/edge-signature.ts'

const claims: EdgeClaims = {
  tenant: 'acme',
  labels: ['pii', 'batch'],
  backends: ['qwen-local'],
  allowBurst: true,
}
const now = 1_800_000_000
const body = new TextEncoder().encode('{"model":"m","messages":[]}')

async function signed(
  overrides: { secret?: string; at?: number; claims?: EdgeClaims; nonce?: string } = {},
) {
  return signEdgeRequest(
    overrides.secret ?? 'first-secret-0123456789',
    { method: 'POST', path: '/v1/chat/completions', body, nonce: overrides.nonce ?? 'nonce-1' },
    overrides.claims ?? claims,
    overrides.at ?? now,
  )
}
function verify(
  headers: Record<string, string>,
  options: { secrets?: string[]; at?: number; path?: string; body?: Uint8Array } = {},
) {
  return verifyEdgeRequest(
    options.secrets ?? ['first-secret-0123456789'],
    {
      method: 'POST',
      path: options.path ?? '/v1/chat/completions',
      body: options.body ?? body,
      headers: (name) => headers[name],
    },
    options.at ?? now,
  )
}

describe('edge request signatures', () => {
  it('verifies what the edge signed and returns its claims', async () => {
    const result = await verify(await signed())
    expect(result).toEqual({
      ok: true,
      claims: { ...claims, labels: ['pii', 'batch'], detectorFailed: false },
      nonce: 'nonce-1',
      expiresAtSeconds: now + 30,
      body: { sha256: await sha256Hex(body), length: body.length },
    })
    const failed = await verify(await signed({ claims: { ...claims, detectorFailed: true } }))
    expect(failed.ok && failed.claims.detectorFailed).toBe(true)
    const estimated = await signed({ claims: { ...claims, promptTokens: 812 } })
    const read = await verify(estimated)
    expect(read.ok && read.claims.promptTokens).toBe(812)
    expect(await verify({ ...estimated, 'x-kinference-prompt-estimate': '9' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    expect(await verify({ ...estimated, 'x-kinference-prompt-estimate': '-1' })).toEqual({
      ok: false,
      reason: 'bad prompt estimate',
    })
  })

  it('signs the policy and rule that decided at the edge, both or neither', async () => {
    const decided = await signed({
      claims: { ...claims, decidedBy: { policy: 'team/acme', rule: 'local-first' } },
    })
    const read = await verify(decided)
    expect(read.ok && read.claims.decidedBy).toEqual({ policy: 'team/acme', rule: 'local-first' })
    expect(await verify({ ...decided, 'x-kinference-rule': 'burst' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    const { 'x-kinference-rule': _, ...withoutRule } = decided
    expect(await verify(withoutRule)).toEqual({
      ok: false,
      reason: 'policy and rule come together',
    })
    const plain = await verify(await signed())
    expect(plain.ok && plain.claims.decidedBy).toBeUndefined()
  })

  it("signs the client's TTFT objective: never changed, added or dropped in transit", async () => {
    const withSlo = await signed({ claims: { ...claims, sloTtftMs: 800 } })
    const read = await verify(withSlo)
    expect(read.ok && read.claims.sloTtftMs).toBe(800)
    const bad = { ok: false, reason: 'bad signature' }
    expect(await verify({ ...withSlo, 'x-kinference-slo-ttft-ms': '80000' })).toEqual(bad)
    const { 'x-kinference-slo-ttft-ms': _, ...dropped } = withSlo
    expect(await verify(dropped)).toEqual(bad)
    const plain = await signed()
    expect(await verify({ ...plain, 'x-kinference-slo-ttft-ms': '800' })).toEqual(bad)
    for (const value of ['0', '8e2', ' 800', '-1'])
      expect(await verify({ ...withSlo, 'x-kinference-slo-ttft-ms': value })).toEqual({
        ok: false,
        reason: 'bad TTFT objective',
      })
    const read2 = await verify(plain)
    expect(read2.ok && read2.claims.sloTtftMs).toBeUndefined()
  })

  it('accepts any of several secrets, for rotation', async () => {
    const result = await verify(await signed({ secret: 'second-secret-0123456789' }), {
      secrets: ['first-secret-0123456789', 'second-secret-0123456789'],
    })
    expect(result.ok).toBe(true)
  })

  it('refuses a changed body, path, claim, or a stale timestamp', async () => {
    const headers = await signed()
    expect(await verify(headers, { body: new TextEncoder().encode('{}') })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    expect(await verify(headers, { path: '/v1/completions' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    expect(await verify({ ...headers, 'x-kinference-labels': 'batch' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    expect(await verify({ ...headers, 'x-kinference-burst': '0' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    expect(await verify({ ...headers, 'x-kinference-detector-failed': '1' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    expect(await verify({ ...headers, 'x-kinference-nonce': 'nonce-2' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    const { 'x-kinference-nonce': _, ...withoutNonce } = headers
    expect(await verify(withoutNonce)).toEqual({ ok: false, reason: 'missing or bad nonce' })
    expect(await verify(headers, { at: now + 31 })).toEqual({
      ok: false,
      reason: 'timestamp outside the allowed window',
    })
    expect(await verify(headers, { secrets: ['another-secret-0123456789'] })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
  })

  it('refuses unsigned or malformed headers without throwing', async () => {
    expect(await verify({})).toEqual({ ok: false, reason: 'missing signature' })
    // v2 did not sign the deciding policy and rule: a v2 edge is refused, not half-trusted.
    expect(await verify({ 'x-kinference-signature': 'v2=abc' })).toEqual({
      ok: false,
      reason: 'unknown signature version (this scorer checks v4)',
    })
    // v3 signed the hash of a body the scorer had to read first: refused like v2.
    const v3 = (await signed())['x-kinference-signature']?.replace(/^v4=/, 'v3=') ?? ''
    expect(await verify({ ...(await signed()), 'x-kinference-signature': v3 })).toEqual({
      ok: false,
      reason: 'unknown signature version (this scorer checks v4)',
    })
    expect(await verify({ 'x-kinference-signature': 'v4=abc' })).toEqual({
      ok: false,
      reason: 'malformed signature',
    })
    const hmac = 'ab'.repeat(32)
    expect(
      await verify({ 'x-kinference-signature': `v4=${hmac}`, 'x-kinference-timestamp': 'soon' }),
    ).toEqual({ ok: false, reason: 'missing or bad timestamp' })
  })
})

describe('v4: everything but the body checked from the headers alone', () => {
  const path = '/v1/chat/completions'
  const withLength = (headers: Record<string, string>, length = body.length) => ({
    method: 'POST',
    path,
    headers: (name: string) => (name === 'content-length' ? String(length) : headers[name]),
  })

  it('verifies the headers before any body, then the body against its signed hash and length', async () => {
    const headers = await signed()
    const verified = await verifyEdgeHeaders(['first-secret-0123456789'], withLength(headers), now)
    expect(verified.ok).toBe(true)
    if (!verified.ok) return
    expect(verified.body).toEqual({ sha256: await sha256Hex(body), length: body.length })
    expect(await verifyEdgeBody(verified.body, body)).toEqual({ ok: true })
    const changed = body.slice()
    changed[3] = 0x21
    expect(await verifyEdgeBody(verified.body, changed)).toEqual({
      ok: false,
      reason: 'body differs from its signed hash',
    })
    expect(await verifyEdgeBody(verified.body, body.subarray(1))).toEqual({
      ok: false,
      reason: 'body length differs from its signed content-length',
    })
  })

  it('refuses a missing or changed content-length, or a missing or changed body hash', async () => {
    const headers = await signed()
    const secrets = ['first-secret-0123456789']
    const without = { method: 'POST', path, headers: (name: string) => headers[name] }
    expect(await verifyEdgeHeaders(secrets, without, now)).toEqual({
      ok: false,
      reason: 'missing or bad content-length',
    })
    expect(await verifyEdgeHeaders(secrets, withLength(headers, body.length + 1), now)).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    for (const spelled of ['1e2', ' 27', '027', '-1', '']) {
      const odd = {
        ...without,
        headers: (n: string) => (n === 'content-length' ? spelled : headers[n]),
      }
      expect((await verifyEdgeHeaders(secrets, odd, now)).ok, spelled).toBe(false)
    }
    const { 'x-kinference-body-sha256': _, ...unhashed } = headers
    expect(await verifyEdgeHeaders(secrets, withLength(unhashed), now)).toEqual({
      ok: false,
      reason: 'missing or bad body hash',
    })
    const otherHash = { ...headers, 'x-kinference-body-sha256': await sha256Hex('{}') }
    expect(await verifyEdgeHeaders(secrets, withLength(otherHash), now)).toEqual({
      ok: false,
      reason: 'bad signature',
    })
  })

  it('signs the edge’s request id: printable ASCII up to 128 characters, never changed in transit', async () => {
    const id = 'edge-0b7c2f4e-8d1a-4c55-9a7e-2f1d3b6c9e01'
    const headers = await signed({ claims: { ...claims, requestId: id } })
    expect(headers['x-kinference-request-id']).toBe(id)
    const read = await verify(headers)
    expect(read.ok && read.claims.requestId).toBe(id)
    expect(await verify({ ...headers, 'x-kinference-request-id': 'someone-elses-id' })).toEqual({
      ok: false,
      reason: 'bad signature',
    })
    const { 'x-kinference-request-id': _, ...withoutId } = headers
    expect(await verify(withoutId)).toEqual({ ok: false, reason: 'bad signature' })
    for (const bad of ['x'.repeat(129), 'a b', 'tab\there', 'c1\u0085', 'del\u007f', ''])
      expect(await verify({ ...headers, 'x-kinference-request-id': bad })).toEqual({
        ok: false,
        reason: 'bad request id',
      })
    await expect(signed({ claims: { ...claims, requestId: 'x'.repeat(129) } })).rejects.toThrow(
      /printable ASCII/,
    )
    const plain = await verify(await signed())
    expect(plain.ok && plain.claims.requestId).toBeUndefined()
  })
})
