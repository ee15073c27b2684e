import { describe, expect, it } from 'vitest'
import { compileLiveConfig } from '../../../shared/config/compile-live-config.ts'
import { takeInUpstreamPools } from '../../../shared/config/take-in-upstream-pools.ts'

function upstream(
  name: string,
  ref: Record<string, unknown> | null,
  ports = [8000],
): Record<string, unknown> {
  return {
    apiVersion: 'inference.networking.k8s.io/v1',
    kind: 'InferencePool',
    metadata: { name, namespace: 'ns', generation: 2 },
    spec: {
      selector: { matchLabels: { app: name } },
      targetPorts: ports.map((number) => ({ number })),
      ...(ref && { endpointPickerRef: ref }),
    },
  }
}

function kinferencePool(name: string, spec: Record<string, unknown>, created = '') {
  return {
    key: `InferencePool/ns/${name}`,
    value: {
      apiVersion: 'kinference.dev/v1alpha1',
      kind: 'InferencePool',
      metadata: { name, namespace: 'ns', ...(created && { creationTimestamp: created }) },
      spec: {
        models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 4096 }],
        gpuProfile: 'l40s-27b-fp8',
        ...spec,
      },
    },
  }
}

const pod = (name: string, app: string, ip: string) => ({
  apiVersion: 'v1' as const,
  kind: 'Pod' as const,
  metadata: { name, namespace: 'ns', labels: { app } },
  status: { podIP: ip },
})
const slice = (pods: { name: string; ip: string }[]) => ({
  apiVersion: 'discovery.k8s.io/v1' as const,
  kind: 'EndpointSlice' as const,
  metadata: { name: 's', namespace: 'ns' },
  addressType: 'IPv4' as const,
  endpoints: pods.map((p) => ({ addresses: [p.ip], targetRef: { kind: 'Pod', name: p.name } })),
})

describe('takeInUpstreamPools', () => {
  it('takes in the pools naming the Service, with the Service kind and core group as defaults', () => {
    const intake = takeInUpstreamPools({
      upstream: [
        upstream('a', { name: 'epp' }),
        upstream('b', { group: '', kind: 'Service', name: 'epp' }),
        upstream('c', { name: 'other' }),
        upstream('d', { group: 'example.com', kind: 'Service', name: 'epp' }),
        upstream('e', { kind: 'Backend', name: 'epp' }),
        upstream('f', null),
      ],
      pools: [],
      service: 'epp',
    })
    expect(intake.taken.map((p) => p.metadata.name)).toEqual(['a', 'b'])
    expect([...intake.outcomes.keys()]).toEqual(['ns/a', 'ns/b'])
    expect(intake.documents.map((d) => d.key)).toEqual(['InferencePool/ns/a', 'InferencePool/ns/b'])
  })

  it('takes in nothing without a Service', () => {
    const intake = takeInUpstreamPools({
      upstream: [upstream('a', { name: 'epp' })],
      pools: [],
      service: null,
    })
    expect(intake).toEqual({ taken: [], outcomes: new Map(), documents: [] })
  })

  it('serves a pool as the oldest Kinference pool naming it, and refuses an id taken or impossible', () => {
    const intake = takeInUpstreamPools({
      upstream: [
        upstream('gie', { name: 'epp' }),
        upstream('taken', { name: 'epp' }),
        upstream('dotted.name', { name: 'epp' }),
      ],
      pools: [
        kinferencePool('young', { upstreamPoolRef: { name: 'gie' } }, '2026-02-01T00:00:00Z'),
        kinferencePool('old', { upstreamPoolRef: { name: 'gie' } }, '2026-01-01T00:00:00Z'),
        kinferencePool('taken', { selector: { matchLabels: { app: 'x' } }, targetPort: 8000 }),
      ],
      service: 'epp',
    })
    expect(intake.outcomes.get('ns/gie')).toEqual({
      served: 'referred',
      poolId: 'ns/old',
      key: 'InferencePool/ns/old',
    })
    expect(intake.outcomes.get('ns/taken')?.served).toBe('refused')
    expect(intake.outcomes.get('ns/dotted.name')?.served).toBe('refused')
    expect(intake.documents).toEqual([])
  })

  it('compiles into pools whose endpoints are each pod on each target port', async () => {
    const intake = takeInUpstreamPools({
      upstream: [upstream('gie', { name: 'epp' }, [8000, 9000]), upstream('one', { name: 'epp' })],
      pools: [],
      service: 'epp',
    })
    const live = await compileLiveConfig({
      documents: intake.documents,
      lastGood: new Map(),
      workloads: {
        pods: [pod('p-0', 'gie', '10.0.0.1'), pod('q-0', 'one', '10.0.0.2')],
        endpointSlices: [
          slice([
            { name: 'p-0', ip: '10.0.0.1' },
            { name: 'q-0', ip: '10.0.0.2' },
          ]),
        ],
        upstreamPools: intake.taken,
      },
      defaultNamespace: 'default',
    })
    if (!live.result.ok) throw new Error('does not compile')
    const { endpoints, pools } = live.result.snapshot
    expect(endpoints['ns/gie']?.map((e) => [e.name, e.http])).toEqual([
      ['p-0:8000', 'http://10.0.0.1:8000'],
      ['p-0:9000', 'http://10.0.0.1:9000'],
    ])
    // One port: the pod's own name, as a Kinference pool's endpoint is named.
    expect(endpoints['ns/one']?.map((e) => e.name)).toEqual(['q-0'])
    expect(pools['ns/gie']?.spec.routing.strategy).toBe('gie-default')
    expect(live.result.resolved.counts['InferencePool/ns/gie']).toEqual({ pods: 1, ready: 1 })
  })

  it('reports a Kinference pool naming an upstream pool not taken in', async () => {
    const document = kinferencePool('orphan', { upstreamPoolRef: { name: 'missing' } })
    const live = await compileLiveConfig({
      documents: [document],
      lastGood: new Map(),
      workloads: { pods: [], endpointSlices: [], upstreamPools: [] },
      defaultNamespace: 'default',
    })
    if (!live.result.ok) throw new Error('does not compile')
    expect(live.result.resolved.issues).toEqual([
      expect.objectContaining({ id: 'ns/orphan', reason: 'UpstreamPoolNotFound' }),
    ])
    expect(live.result.snapshot.endpoints['ns/orphan']).toEqual([])
  })
})
