import { describe, expect, it } from 'vitest'
import {
  type EdgeClaims,
  signEdgeRequest,
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
      reason: 'unknown signature version (this scorer checks v3)',
    })
    expect(
      await verify({ 'x-kinference-signature': 'v3=abc', 'x-kinference-timestamp': 'soon' }),
    ).toEqual({ ok: false, reason: 'missing or bad timestamp' })
  })
})
