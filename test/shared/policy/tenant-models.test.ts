import { beforeAll, describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { tenantModels } from '../../../shared/policy/tenant-models.ts'
import { exampleSnapshot } from './example-snapshot.ts'

let snapshot: ConfigSnapshot
beforeAll(async () => {
  snapshot = await exampleSnapshot()
})

describe('tenantModels', () => {
  it('lists the tenant’s names, aliases included, sorted', () => {
    expect(tenantModels(snapshot, 'hooli')).toEqual(['gpt-4o', 'gpt-4o-mini', 'support'])
    expect(tenantModels(snapshot, 'acme-support')).toEqual(['chat', 'qwen3.8-27b-fp8'])
    expect(tenantModels(snapshot, 'free-tier')).toEqual(['qwen3-8b'])
  })

  it('expands "*" to the models the rules open to this tenant', () => {
    expect(tenantModels(snapshot, 'pro-tier')).toEqual(['qwen3-8b', 'qwen3.8-27b-fp8'])
  })

  it('expands "*" to the names rules serve, aliases included, skipping rules for other tenants', async () => {
    const starred = await exampleSnapshot((documents) => {
      const policy = documents.find(
        (d) => (d as { metadata?: { name?: string } }).metadata?.name === 'model-alias',
      ) as {
        spec: {
          tenants: { name?: string; apiKeys?: unknown[]; models: string[] }[]
          rules: unknown[]
        }
      }
      const [hooli] = policy.spec.tenants
      if (hooli) hooli.models = ['*']
      policy.spec.rules.push({
        name: 'someone-else',
        match: { tenants: ['hooli-other'] },
        action: { route: { backends: ['bedrock-claude'] } },
      })
      policy.spec.tenants.push({
        name: 'hooli-other',
        apiKeys: [{ id: 'other01', sha256: 'a'.repeat(64) }],
        models: ['x'],
      })
    })
    expect(tenantModels(starred, 'hooli')).toEqual([
      'gpt-4o',
      'gpt-4o-mini',
      'qwen3-8b',
      'qwen3.8-27b-fp8',
      'support',
    ])
    // The adapter's own name is served only as "support": no rule answers to it.
    expect(tenantModels(starred, 'hooli')).not.toContain('support-tone')
  })

  it('lists nothing for an unknown tenant', () => {
    expect(tenantModels(snapshot, 'nobody')).toEqual([])
  })
})
