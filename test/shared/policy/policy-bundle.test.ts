import { describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { evaluatePolicy } from '../../../shared/policy/evaluate-policy.ts'
import { heldLocalBy } from '../../../shared/policy/held-local-by.ts'
import { interpretRequest } from '../../../shared/policy/interpret-request.ts'
import { policyBundleOf } from '../../../shared/policy/policy-bundle.ts'
import type { PoolStatus } from '../../../shared/policy/policy-decision.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { exampleSnapshot } from './example-snapshot.ts'

/** Random requests and pool statuses over a snapshot's tenants, models and pools. */
function cases(snapshot: ConfigSnapshot, count: number, seed: number) {
  const random = createSeededRandom(seed)
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T
  const tenants = Object.keys(snapshot.tenants)
  const models = [
    ...new Set(
      Object.values(snapshot.policies).flatMap((p) => p.spec.tenants.flatMap((t) => t.models)),
    ),
    'qwen3.8-27b-fp8',
    'unknown-model',
  ]
  const labels = ['pii', 'pii:card', 'batch', 'confidential']
  return Array.from({ length: count }, () => {
    const status = new Map<string, PoolStatus>()
    for (const id of Object.keys(snapshot.pools)) {
      if (random() < 0.2) continue
      const saturation = random() * 1.5
      status.set(id, {
        saturation,
        saturated: saturation >= 1,
        predictedTtftMs: random() < 0.2 ? null : Math.round(random() * 5_000),
      })
    }
    return {
      request: {
        tenant: pick(tenants),
        model: pick(models),
        promptTokens: Math.floor(random() * 40_000),
        labels: labels.filter(() => random() < 0.3),
        detectorFailed: random() < 0.1,
      },
      status,
    }
  })
}

describe('policyBundleOf', () => {
  it('decides every request as the whole snapshot does, with a fraction of it', async () => {
    const snapshot = await exampleSnapshot()
    for (const { request, status } of cases(snapshot, 2_000, 7)) {
      const bundle = policyBundleOf(snapshot, request.tenant)
      if (!bundle) throw new Error(`no bundle for ${request.tenant}`)
      const input = { request, poolStatus: (id: string) => status.get(id) }
      const decision = evaluatePolicy(snapshot, input)
      expect(evaluatePolicy(bundle, input)).toEqual(decision)
      expect(interpretRequest(bundle, request).pools).toEqual(
        interpretRequest(snapshot, request).pools,
      )
      const policy = decision.policy
      expect(heldLocalBy(bundle, policy, request.labels, request.detectorFailed)).toEqual(
        heldLocalBy(snapshot, policy, request.labels, request.detectorFailed),
      )
    }
    const one = policyBundleOf(snapshot, Object.keys(snapshot.tenants)[0] as string)
    expect(Object.keys(one?.tenants ?? {})).toHaveLength(1)
    expect(Object.keys(one?.policies ?? {})).toHaveLength(1)
    expect(JSON.stringify(one).length).toBeLessThan(JSON.stringify(snapshot).length / 2)
  })

  it('is null for a tenant the snapshot does not know', async () => {
    expect(policyBundleOf(await exampleSnapshot(), 'nobody')).toBeNull()
    expect(policyBundleOf(await exampleSnapshot(), 'constructor')).toBeNull()
  })
})
