import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubeConfig,
} from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { failure, namespace, pools, useServerWithClient } from './client-node-fixtures.ts'

const api = useServerWithClient()

describe('@kubernetes/client-node built-in APIs', () => {
  it('creates and replaces Leases, with 409 on a stale resourceVersion', async () => {
    const leases = api.kc.makeApiClient(CoordinationV1Api)
    const now = new Date()
    const lease = await leases.createNamespacedLease({
      namespace,
      body: {
        metadata: { name: 'kinference-controller' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: now, renewTime: now },
      },
    })
    expect(lease.spec?.holderIdentity).toBe('a')
    const renewed = await leases.replaceNamespacedLease({
      namespace,
      name: 'kinference-controller',
      body: { ...lease, spec: { ...lease.spec, renewTime: new Date(now.getTime() + 2_000) } },
    })
    expect(renewed.metadata?.resourceVersion).not.toBe(lease.metadata?.resourceVersion)
    const stolen = await failure(
      leases.replaceNamespacedLease({
        namespace,
        name: 'kinference-controller',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
      }),
    )
    expect(stolen.code).toBe(409)
  })

  it('lists EndpointSlices and Pods by label selector, and creates Events', async () => {
    const discovery = api.kc.makeApiClient(DiscoveryV1Api)
    const core = api.kc.makeApiClient(CoreV1Api)
    for (const service of ['vllm', 'other']) {
      await discovery.createNamespacedEndpointSlice({
        namespace,
        body: {
          metadata: { name: `${service}-abc`, labels: { 'kubernetes.io/service-name': service } },
          addressType: 'IPv4',
          endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
          ports: [{ name: 'http', port: 8000 }],
        },
      })
    }
    const slices = await discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: 'kubernetes.io/service-name=vllm',
    })
    expect(slices.items.map((s) => s.metadata?.name)).toEqual(['vllm-abc'])

    for (const [name, app] of [
      ['p1', 'a'],
      ['p2', 'b'],
      ['p3', 'c'],
    ] as const) {
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name, labels: { app } },
          spec: { containers: [{ name: 'c', image: 'vllm' }] },
        },
      })
    }
    const pod = await core.readNamespacedPod({ namespace, name: 'p1' })
    expect(pod.status?.phase).toBe('Pending')
    const names = async (labelSelector: string) =>
      (await core.listNamespacedPod({ namespace, labelSelector })).items.map(
        (p) => p.metadata?.name,
      )
    expect(await names('app in (a,b)')).toEqual(['p1', 'p2'])
    expect(await names('app notin (a),app')).toEqual(['p2', 'p3'])
    expect(await names('app!=c')).toEqual(['p1', 'p2'])
    expect(await names('!app')).toEqual([])
    const byField = await core.listNamespacedPod({ namespace, fieldSelector: 'metadata.name=p3' })
    expect(byField.items).toHaveLength(1)

    const event = await core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { generateName: 'crud.' },
        involvedObject: { kind: 'InferencePool', name: 'crud', namespace },
        reason: 'Reconciled',
        message: 'ok',
        type: 'Normal',
      },
    })
    expect(event.metadata?.name).toMatch(/^crud\.[a-z0-9]{5}$/)
  })

  it('reads Secrets, with stringData turned into data', async () => {
    api.server.objects.create('v1', 'secrets', {
      metadata: { name: 'signing', namespace },
      stringData: { key: 'hunter2' },
    })
    const secret = await api.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace, name: 'signing' })
    expect(secret.data).toEqual({ key: Buffer.from('hunter2').toString('base64') })
  })

  it('denies a forbidden token with 403 and answers 503 while unavailable', async () => {
    const other = new KubeConfig()
    other.loadFromFile(api.server.writeKubeconfig({ token: 'no-rbac' }))
    const denied = other.makeApiClient(CustomObjectsApi)
    const allow = api.server.forbid({
      token: 'no-rbac',
      verbs: ['list'],
      resources: ['inferencepools'],
    })
    const forbidden = await failure(denied.listNamespacedCustomObject(pools))
    expect(forbidden.body).toMatchObject({ reason: 'Forbidden', code: 403 })
    expect(forbidden.body.message).toContain('cannot list resource "inferencepools"')
    await api.custom.listNamespacedCustomObject(pools) // other tokens are not affected
    allow()
    await denied.listNamespacedCustomObject(pools)

    api.server.setUnavailable(true)
    const down = await failure(api.custom.listNamespacedCustomObject(pools))
    api.server.setUnavailable(false)
    expect(down.code).toBe(503)
  })
})
