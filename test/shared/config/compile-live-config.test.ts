import { describe, expect, it } from 'vitest'
import { compileLiveConfig, type LiveDocument } from '../../../shared/config/compile-live-config.ts'
import type { KinferenceResource } from '../../../shared/crd/resource.ts'
import type { WatchedEndpointSlice, WatchedPod } from '../../../shared/kube/watched-pod.ts'
import { examplesDir, readYamlFolder } from '../../support/read-yaml-documents.ts'

const examples = readYamlFolder(examplesDir)
const documentsOf = (name: string) => examples.find((f) => f.file.endsWith(name))?.documents ?? []
const platform = documentsOf('platform.yaml')
const policy = documentsOf('burst-to-bedrock.yaml')

const keyOf = (value: unknown) => {
  const { kind, metadata } = value as {
    kind: string
    metadata: { namespace?: string; name: string }
  }
  return `${kind}/${metadata.namespace ?? 'default'}/${metadata.name}`
}
const live = (values: readonly unknown[]): LiveDocument[] =>
  values.map((value) => ({ key: keyOf(value), value }))

function pod(name: string, labels: Record<string, string>, extra: object = {}): WatchedPod {
  return { metadata: { name, namespace: 'kinference', labels, ...extra } }
}
function slice(
  endpoints: { pod: string; ip: string; ready?: boolean; terminating?: boolean }[],
): WatchedEndpointSlice {
  return {
    metadata: { name: 'vllm-abc', namespace: 'kinference' },
    addressType: 'IPv4',
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, terminating: e.terminating ?? false },
      targetRef: { kind: 'Pod', name: e.pod, namespace: 'kinference' },
    })),
  }
}

const noWork = { pods: [], endpointSlices: [] }

describe('compileLiveConfig', () => {
  it('resolves ready, non-terminating slice endpoints on the pool ports', async () => {
    const { result } = await compileLiveConfig({
      documents: live([...platform, ...policy]),
      lastGood: new Map(),
      defaultNamespace: 'default',
      workloads: {
        pods: [
          pod('a', { app: 'vllm-qwen-27b', lora: 'support' }),
          pod('b', { app: 'vllm-qwen-27b' }),
          pod('c', { app: 'vllm-qwen-27b' }),
          pod('d', { app: 'vllm-qwen-27b' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
          pod('e', { app: 'vllm-qwen-27b' }),
        ],
        endpointSlices: [
          slice([
            { pod: 'a', ip: '10.0.0.1' },
            { pod: 'b', ip: '10.0.0.2' },
            { pod: 'c', ip: '10.0.0.3', ready: false },
            { pod: 'd', ip: '10.0.0.4' },
            { pod: 'e', ip: '10.0.0.5', terminating: true },
          ]),
        ],
      },
    })
    if (!result.ok) throw new Error(JSON.stringify(result.issues))
    const endpoints = result.snapshot.endpoints['kinference/qwen-27b'] ?? []
    expect(endpoints.map((e) => e.name)).toEqual(['a', 'b'])
    expect(endpoints[0]).toMatchObject({
      http: 'http://10.0.0.1:8000',
      metrics: 'http://10.0.0.1:8000/metrics',
      events: 'tcp://10.0.0.1:5557',
      replay: 'tcp://10.0.0.1:5558',
      workerSet: 'qwen-27b-support-lora',
    })
    expect(endpoints[1]?.workerSet).toBeNull()
    expect(result.resolved.counts['InferencePool/kinference/qwen-27b']).toEqual({
      pods: 4,
      ready: 2,
    })
    expect(result.snapshot.endpoints['kinference/qwen-8b']).toEqual([])
  })

  it('gives a pod two pools select to the first and tells the other', async () => {
    const greedy = structuredClone(
      platform.find((d) => keyOf(d) === 'InferencePool/kinference/qwen-8b'),
    ) as { spec: { selector: { matchLabels: object } } }
    greedy.spec.selector.matchLabels = {}
    const documents = live([
      ...platform.filter((d) => keyOf(d) !== 'InferencePool/kinference/qwen-8b'),
      greedy,
      ...policy,
    ])
    const { result } = await compileLiveConfig({
      documents,
      lastGood: new Map(),
      defaultNamespace: 'default',
      workloads: {
        pods: [pod('a', { app: 'vllm-qwen-27b' })],
        endpointSlices: [slice([{ pod: 'a', ip: '10.0.0.1' }])],
      },
    })
    if (!result.ok) throw new Error('not ok')
    expect(result.snapshot.endpoints['kinference/qwen-27b']?.map((e) => e.name)).toEqual(['a'])
    expect(result.snapshot.endpoints['kinference/qwen-8b']).toEqual([])
    expect(result.resolved.issues).toEqual([
      expect.objectContaining({
        id: 'kinference/qwen-8b',
        reason: 'OverlappingSelector',
        message: expect.stringContaining(
          'pod a also selected by InferencePool kinference/qwen-27b',
        ),
      }),
    ])
  })

  it('keeps the last accepted version of a resource whose change breaks it', async () => {
    const first = await compileLiveConfig({
      documents: live([...platform, ...policy]),
      lastGood: new Map(),
      defaultNamespace: 'default',
      workloads: noWork,
    })
    expect([...first.verdicts.values()].every((v) => v.accepted)).toBe(true)
    const broken = structuredClone(policy[0]) as {
      spec: { rules: { action: { burst: { local: string[] } } }[] }
    }
    const rule = broken.spec.rules[0]
    if (rule) rule.action.burst.local = ['no-such-backend']
    const second = await compileLiveConfig({
      documents: live([...platform, broken]),
      lastGood: first.carried,
      defaultNamespace: 'default',
      workloads: noWork,
    })
    const verdict = second.verdicts.get(keyOf(broken))
    expect(verdict).toMatchObject({ accepted: false, resolvedRefs: 'False', carried: 'previous' })
    expect(verdict?.problems.join()).toContain('spec.rules[0].action.burst.local[0]: ')
    if (!first.result.ok || !second.result.ok) throw new Error('not ok')
    expect(second.result.snapshot.hash).toBe(first.result.snapshot.hash)
  })

  it('reports a schema error with its field path and carries nothing new', async () => {
    const bad = structuredClone(policy[0]) as {
      metadata: { name: string }
      spec: Record<string, unknown>
    }
    bad.metadata.name = 'fresh-policy'
    bad.spec.surprise = 1
    const { verdicts, carried } = await compileLiveConfig({
      documents: live([...platform, bad]),
      lastGood: new Map<string, KinferenceResource>(),
      defaultNamespace: 'default',
      workloads: noWork,
    })
    expect(verdicts.get(keyOf(bad))).toMatchObject({
      accepted: false,
      resolvedRefs: 'Unknown',
      carried: 'none',
      problems: ['spec.surprise: unknown field "surprise"'],
    })
    expect(carried.has(keyOf(bad))).toBe(false)
  })
})
