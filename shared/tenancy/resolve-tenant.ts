import { constantTimeEqual } from '../auth/constant-time-equal.ts'
import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import { parseApiKey, sha256HexOf } from './api-key.ts'

export type TenantResolution =
  | { tenant: string; keyId: string }
  | { error: 'missing' | 'malformed' | 'unknown' }

interface KeyEntry {
  tenant: string
  sha256: string
}

/** Key id -> the tenants' keys with that id, built once per snapshot object. */
const indexes = new WeakMap<ConfigSnapshot, Map<string, KeyEntry[]>>()

function keyIndex(snapshot: ConfigSnapshot): Map<string, KeyEntry[]> {
  let index = indexes.get(snapshot)
  if (index !== undefined) return index
  index = new Map()
  for (const policy of Object.values(snapshot.policies)) {
    for (const tenant of policy.spec.tenants) {
      for (const key of tenant.apiKeys) {
        const entries = index.get(key.id) ?? []
        entries.push({ tenant: tenant.name, sha256: key.sha256 })
        index.set(key.id, entries)
      }
    }
  }
  indexes.set(snapshot, index)
  return index
}

/**
 * The tenant an API key authenticates as. The secret's hash is always computed and compared
 * in constant time. A key whose id and hash are claimed by two different tenants (a config
 * mistake) authenticates as neither rather than as a guess.
 */
export async function resolveTenant(
  snapshot: ConfigSnapshot,
  rawKey: string | null | undefined,
): Promise<TenantResolution> {
  if (rawKey === undefined || rawKey === null || rawKey === '') return { error: 'missing' }
  const parsed = parseApiKey(rawKey)
  if (parsed === null) return { error: 'malformed' }
  const hash = await sha256HexOf(parsed.secret)
  const tenants = new Set<string>()
  for (const entry of keyIndex(snapshot).get(parsed.id) ?? []) {
    if (constantTimeEqual(hash, entry.sha256)) tenants.add(entry.tenant)
  }
  if (tenants.size !== 1) return { error: 'unknown' }
  const [tenant] = tenants
  return { tenant: tenant as string, keyId: parsed.id }
}
