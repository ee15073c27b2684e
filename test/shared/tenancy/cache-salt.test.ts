import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createCacheSalter } from '../../../shared/tenancy/cache-salt.ts'

/** The derivation written out with node:crypto, independently of Web Crypto. */
function expected(secret: string, tenant: string, clientSalt: string): string {
  const key = createHmac('sha256', secret).update('kinference cache salt v1').digest()
  return createHmac('sha256', key).update(`${tenant}\0${clientSalt}`).digest('base64url')
}

describe('createCacheSalter', () => {
  const salt = createCacheSalter('signing-secret-0123456789')

  it('is HMAC-SHA256 under a key derived from the secret, over tenant NUL client salt', async () => {
    expect(await salt('acme', null)).toBe(expected('signing-secret-0123456789', 'acme', ''))
    expect(await salt('acme', 'conv-7')).toBe(
      expected('signing-secret-0123456789', 'acme', 'conv-7'),
    )
    expect(await salt('acme', null)).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('is the same for the same tenant and client salt, and differs otherwise', async () => {
    const base = await salt('acme', null)
    expect(await salt('acme', null)).toBe(base)
    expect(await salt('acme', '')).toBe(base)
    expect(await salt('globex', null)).not.toBe(base)
    expect(await salt('acme', 'x')).not.toBe(base)
    expect(await createCacheSalter('another-secret-0123456789')('acme', null)).not.toBe(base)
  })

  it('never gives a client salt back, nor the plain HMAC of the signing secret', async () => {
    const forged = createHmac('sha256', 'signing-secret-0123456789')
      .update('globex\0')
      .digest('base64url')
    expect(await salt('globex', null)).not.toBe(forged)
    expect(await salt('acme', 'chosen')).not.toBe('chosen')
  })

  it('takes the secret as bytes too', async () => {
    const bytes = new TextEncoder().encode('signing-secret-0123456789')
    expect(await createCacheSalter(bytes)('acme', null)).toBe(await salt('acme', null))
  })
})
