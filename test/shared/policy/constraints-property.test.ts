import { beforeAll, describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { evaluatePolicy } from '../../../shared/policy/evaluate-policy.ts'
import type { PoolStatus } from '../../../shared/policy/policy-decision.ts'
import { tenantModels } from '../../../shared/policy/tenant-models.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { exampleSnapshot, request } from './example-snapshot.ts'

let snapshot: ConfigSnapshot
beforeAll(async () => {
  // Besides the examples, a rule that serves only on Bedrock, so the property also
  // meets rules whose every target is external.
  snapshot = await exampleSnapshot((documents) => {
    const policy = documents.find(
      (d) => (d as { metadata?: { name?: string } }).metadata?.name === 'pii-stays-local',
    ) as { spec: { tenants: { models: string[] }[]; rules: unknown[] } }
    policy.spec.tenants[0]?.models.push('claude-sonnet')
    policy.spec.rules.unshift({
      name: 'claude-on-bedrock',
      match: { models: ['claude-sonnet'] },
      action: { route: { backends: ['bedrock-claude'] } },
    })
  })
})

describe('locality constraints, for random requests and pool status', () => {
  it('never give a request carrying a constrained label an External attempt', () => {
    const random = createSeededRandom(6)
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
    const labelPool = ['pii', 'pii:card', 'pii:email', 'batch', 'complexity:simple', 'piiish']
    const constrained = (labels: readonly string[], failed: boolean) =>
      failed || labels.some((label) => label === 'pii' || label.startsWith('pii:'))
    const randomStatus = (): PoolStatus | undefined =>
      random() < 0.25
        ? undefined
        : {
            saturation: random() * 1.5,
            saturated: random() < 0.4,
            predictedTtftMs: random() < 0.3 ? null : Math.round(random() * 6000),
          }
    const seen = { external: 0, guarded: 0, rejected: 0 }
    for (let i = 0; i < 3000; i++) {
      const tenant = pick(Object.keys(snapshot.tenants))
      const labels = labelPool.filter(() => random() < 0.3)
      const detectorFailed = random() < 0.15
      const pools = new Map<string, PoolStatus | undefined>()
      const decision = evaluatePolicy(snapshot, {
        request: request(tenant, pick([...tenantModels(snapshot, tenant), 'unknown-model']), {
          promptTokens: Math.floor(random() * 40_000),
          labels,
          detectorFailed,
        }),
        poolStatus: (pool) => {
          if (!pools.has(pool)) pools.set(pool, randomStatus())
          return pools.get(pool)
        },
      })
      const external =
        decision.kind === 'serve' && decision.attempts.some((a) => a.locality === 'External')
      if (constrained(labels, detectorFailed) && tenant === 'initech-health') {
        seen.guarded++
        expect(external, JSON.stringify({ labels, detectorFailed, decision })).toBe(false)
        if (decision.kind === 'reject' && decision.code === 'locality_violation') seen.rejected++
      }
      if (external) seen.external++
    }
    // The property must have been exercised, both ways.
    expect(seen.guarded).toBeGreaterThan(100)
    expect(seen.rejected).toBeGreaterThan(10)
    expect(seen.external).toBeGreaterThan(100)
  })
})
