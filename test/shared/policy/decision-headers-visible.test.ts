import { describe, expect, it } from 'vitest'
import { demoSnapshot } from '../../../control-plane/lab/embedded/demo-snapshot.ts'
import { InferencePolicySpec } from '../../../shared/crd/inference-policy.ts'
import {
  decisionHeaderNames,
  decisionHeadersVisible,
  isDecisionHeader,
  removeDecisionHeaders,
} from '../../../shared/policy/decision-headers-visible.ts'
import { exampleSnapshot } from './example-snapshot.ts'

interface PolicyDocument {
  metadata: { name: string }
  spec: { decisionHeaders?: string; tenants: { name: string; decisionHeaders?: string }[] }
}

/** The examples with `edit` applied to the InferencePolicy named `name`. */
const examplesWith = (name: string, edit: (policy: PolicyDocument) => void) =>
  exampleSnapshot((documents) => {
    const policy = documents.find(
      (d) => (d as Partial<PolicyDocument>).metadata?.name === name,
    ) as PolicyDocument
    edit(policy)
  })

describe('decisionHeadersVisible', () => {
  it('is false for every tenant of the examples: Hidden is the default', async () => {
    const snapshot = await exampleSnapshot()
    const tenants = Object.keys(snapshot.tenants)
    expect(tenants.length).toBeGreaterThan(3)
    for (const tenant of tenants)
      expect(decisionHeadersVisible(snapshot, tenant), tenant).toBe(false)
    expect(InferencePolicySpec.parse({ tenants: [], rules: [rejectAll] }).decisionHeaders).toBe(
      'Hidden',
    )
  })

  it('follows the tenant’s own setting, else its policy’s', async () => {
    const visiblePolicy = await examplesWith('tenant-limits', (policy) => {
      policy.spec.decisionHeaders = 'Visible'
      const [free] = policy.spec.tenants
      if (free) free.decisionHeaders = 'Hidden'
    })
    expect(decisionHeadersVisible(visiblePolicy, 'pro-tier')).toBe(true)
    expect(decisionHeadersVisible(visiblePolicy, 'free-tier')).toBe(false)
    // Another policy's tenants keep their own policy's default.
    expect(decisionHeadersVisible(visiblePolicy, 'hooli')).toBe(false)

    const visibleTenant = await examplesWith('tenant-limits', (policy) => {
      const [free] = policy.spec.tenants
      if (free) free.decisionHeaders = 'Visible'
    })
    expect(decisionHeadersVisible(visibleTenant, 'free-tier')).toBe(true)
    expect(decisionHeadersVisible(visibleTenant, 'pro-tier')).toBe(false)
  })

  it('is false for an unknown tenant and for none', async () => {
    const snapshot = await examplesWith('tenant-limits', (policy) => {
      policy.spec.decisionHeaders = 'Visible'
    })
    expect(decisionHeadersVisible(snapshot, 'nobody')).toBe(false)
    expect(decisionHeadersVisible(snapshot, '')).toBe(false)
    expect(decisionHeadersVisible(snapshot, 'constructor')).toBe(false)
  })

  it('is true for the demo tenant of the embedded default', async () => {
    const snapshot = await demoSnapshot('http://127.0.0.1:1', 'demo', '0'.repeat(64))
    expect(decisionHeadersVisible(snapshot, 'demo')).toBe(true)
  })

  it('refuses a value other than Hidden or Visible', () => {
    const parsed = InferencePolicySpec.safeParse({
      tenants: [],
      rules: [rejectAll],
      decisionHeaders: 'visible',
    })
    expect(parsed.success).toBe(false)
  })
})

describe('the decision headers', () => {
  it('are the routing headers and the simulator’s timings, matched in any case', () => {
    expect(decisionHeaderNames).toEqual([
      'x-kinference-decision',
      'x-kinference-reason',
      'x-kinference-fallback',
      'x-kinference-saturated',
    ])
    for (const name of [
      ...decisionHeaderNames,
      'X-Kinference-Decision',
      'x-kinference-sim-ttft-ms',
    ])
      expect(isDecisionHeader(name), name).toBe(true)
    for (const name of ['x-request-id', 'x-kinference-labels', 'content-type', 'retry-after'])
      expect(isDecisionHeader(name), name).toBe(false)
  })

  it('are removed from an answer’s headers, and nothing else is', () => {
    const headers = new Headers({
      'content-type': 'application/json',
      'x-request-id': 'r1',
      'retry-after': '1',
      'x-kinference-decision': 'policy=demo/demo; rule=r; pool=p; pod=sim-pod-0',
      'x-kinference-reason': 'kinference: predicted TTFT 40 ms, next best 90 ms',
      'x-kinference-fallback': 'demo/sim-local: saturated',
      'x-kinference-saturated': '1',
      'x-kinference-sim-queue-ms': '12',
    })
    removeDecisionHeaders(headers)
    expect([...headers.keys()].sort()).toEqual(['content-type', 'retry-after', 'x-request-id'])
  })
})

const rejectAll = {
  name: 'reject-all',
  action: { reject: { status: 403, code: 'closed', message: 'closed' } },
}
