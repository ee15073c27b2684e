import { describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { sha256HexOf } from '../../../shared/tenancy/api-key.ts'
import { resolveTenant } from '../../../shared/tenancy/resolve-tenant.ts'

const acmeSecret = 'AcmeSecretAcmeSecret0123456789ab'
const globexSecret = 'GlobexSecretGlobexSecret01234567'

/** A snapshot with just what resolveTenant reads: policies' tenants and their keys. */
async function snapshotWith(
  tenants: { policy: string; name: string; keys: { id: string; secret: string }[] }[],
): Promise<ConfigSnapshot> {
  const policies: Record<string, unknown> = {}
  for (const tenant of tenants) {
    const [namespace, name] = tenant.policy.split('/') as [string, string]
    policies[tenant.policy] ??= { namespace, name, spec: { tenants: [], rules: [] } }
    const entry = policies[tenant.policy]
    ;(entry as { spec: { tenants: unknown[] } }).spec.tenants.push({
      name: tenant.name,
      apiKeys: await Promise.all(
        tenant.keys.map(async (key) => ({ id: key.id, sha256: await sha256HexOf(key.secret) })),
      ),
      models: ['*'],
    })
  }
  return {
    kind: 'KinferenceConfigSnapshot',
    schemaVersion: 2,
    hash: `sha256:${'0'.repeat(64)}`,
    pools: {},
    workerSets: {},
    providers: {},
    backends: {},
    endpoints: {},
    policies: policies as ConfigSnapshot['policies'],
    tenants: Object.fromEntries(tenants.map((t) => [t.name, t.policy])),
  }
}

describe('resolveTenant', async () => {
  const snapshot = await snapshotWith([
    {
      policy: 'team/a',
      name: 'acme',
      keys: [
        { id: 'acme01', secret: acmeSecret },
        { id: 'acme02', secret: `${acmeSecret}x` },
      ],
    },
    { policy: 'team/b', name: 'globex', keys: [{ id: 'globex01', secret: globexSecret }] },
  ])

  it('finds the tenant of each key', async () => {
    expect(await resolveTenant(snapshot, `kinf_acme01_${acmeSecret}`)).toEqual({
      tenant: 'acme',
      keyId: 'acme01',
    })
    expect(await resolveTenant(snapshot, `kinf_acme02_${acmeSecret}x`)).toEqual({
      tenant: 'acme',
      keyId: 'acme02',
    })
    expect(await resolveTenant(snapshot, `kinf_globex01_${globexSecret}`)).toEqual({
      tenant: 'globex',
      keyId: 'globex01',
    })
  })

  it('says why a key does not authenticate', async () => {
    expect(await resolveTenant(snapshot, undefined)).toEqual({ error: 'missing' })
    expect(await resolveTenant(snapshot, '')).toEqual({ error: 'missing' })
    expect(await resolveTenant(snapshot, 'sk-abc')).toEqual({ error: 'malformed' })
    // Right id, another key's secret; unknown id; a secret one character off.
    expect(await resolveTenant(snapshot, `kinf_acme01_${globexSecret}`)).toEqual({
      error: 'unknown',
    })
    expect(await resolveTenant(snapshot, `kinf_nobody01_${acmeSecret}`)).toEqual({
      error: 'unknown',
    })
    expect(await resolveTenant(snapshot, `kinf_acme01_${acmeSecret.slice(0, -1)}c`)).toEqual({
      error: 'unknown',
    })
  })

  it('refuses a key two tenants claim rather than guess', async () => {
    const clash = await snapshotWith([
      { policy: 'team/a', name: 'acme', keys: [{ id: 'shared01', secret: acmeSecret }] },
      { policy: 'team/b', name: 'globex', keys: [{ id: 'shared01', secret: acmeSecret }] },
    ])
    expect(await resolveTenant(clash, `kinf_shared01_${acmeSecret}`)).toEqual({ error: 'unknown' })
  })

  it('builds its index per snapshot: a new snapshot sees rotated keys', async () => {
    const rotated = await snapshotWith([
      { policy: 'team/a', name: 'acme', keys: [{ id: 'acme03', secret: globexSecret }] },
    ])
    expect(await resolveTenant(rotated, `kinf_acme01_${acmeSecret}`)).toEqual({ error: 'unknown' })
    expect(await resolveTenant(rotated, `kinf_acme03_${globexSecret}`)).toMatchObject({
      tenant: 'acme',
    })
    expect(await resolveTenant(snapshot, `kinf_acme01_${acmeSecret}`)).toMatchObject({
      tenant: 'acme',
    })
  })
})
