/**
 * vLLM's `cache_salt` for tenants whose prefix cache is isolated (InferencePolicy tenant
 * `prefixCache.sharing: Isolated`; docs/edge-keys-and-errors.md §1.4). vLLM mixes the salt
 * into the hash of a prompt's first block, so requests with different salts share no
 * cached block, and no tenant can tell from its own TTFT what another sent recently.
 *
 * salt = base64url(HMAC-SHA256(K, tenant + "\0" + client's cache_salt or "")), with
 * K = HMAC-SHA256(signing secret, "kinference cache salt v1"). Keyed, so that a tenant
 * whose salt passes through unchanged (Shared) cannot compute an Isolated tenant's salt;
 * derived under its own label, so that a salt says nothing about the signing key. Tenant
 * names cannot contain "\0" (they are DNS labels), so no two pairs give the same input.
 */

/** The salt for a tenant and the client's own cache_salt (null or "" when it sent none). */
export type CacheSalter = (tenant: string, clientSalt: string | null) => Promise<string>

const label = 'kinference cache salt v1'
const encoder = new TextEncoder()

/** A salter keyed by `secret` (the edge's signing secret); the key is derived once. */
export function createCacheSalter(secret: string | Uint8Array): CacheSalter {
  let key: ReturnType<typeof deriveSaltKey> | undefined
  const salt = async (tenant: string, clientSalt: string) => {
    key ??= deriveSaltKey(secret)
    const input = encoder.encode(`${tenant}\0${clientSalt}`)
    return base64url(await crypto.subtle.sign('HMAC', await key, input))
  }
  // Most requests send no salt of their own: each tenant's salt is then computed once, not
  // per request. Only authenticated tenants get here, so the map is bounded by the policy.
  const byTenant = new Map<string, Promise<string>>()
  return (tenant, clientSalt) => {
    if (clientSalt) return salt(tenant, clientSalt)
    let known = byTenant.get(tenant)
    if (!known) {
      known = salt(tenant, '').catch((error: unknown) => {
        byTenant.delete(tenant)
        throw error
      })
      byTenant.set(tenant, known)
    }
    return known
  }
}

async function deriveSaltKey(secret: string | Uint8Array) {
  const raw = typeof secret === 'string' ? encoder.encode(secret) : secret
  const signing = await hmacKey(raw as Uint8Array<ArrayBuffer>)
  return hmacKey(await crypto.subtle.sign('HMAC', signing, encoder.encode(label)))
}

function hmacKey(raw: Uint8Array<ArrayBuffer> | ArrayBuffer) {
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
}

function base64url(bytes: ArrayBuffer): string {
  let binary = ''
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
