import { describe, expect, it } from 'vitest'
import { eppControllerName } from '../../../control-plane/controller/upstream-pool-status.ts'
import {
  conditionOf,
  eventually,
  kinference,
  publishedOf,
  putObject,
  upstreamPoolCrd,
  yamlObjects,
} from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'
import type { KubeObject } from '../../support/kube-api-server/start-kube-api-server.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const upstream = 'inference.networking.k8s.io/v1'
const epp = 'kinference-epp'
const { uniquePrefix } = useRedisTestNamespaces()

/** An upstream InferencePool of namespace kinference selecting app=`app` on two ports. */
function upstreamPool(name: string, picker = epp, app = 'gie'): KubeObject {
  return {
    apiVersion: upstream,
    kind: 'InferencePool',
    metadata: { name, namespace: 'kinference' },
    spec: {
      selector: { matchLabels: { app } },
      targetPorts: [{ number: 8000 }, { number: 8001 }],
      endpointPickerRef: { name: picker, port: { number: 9002 } },
    },
  }
}

/** Another controller's entry, as a gateway implementation writes it. */
function gatewayParent(message: string) {
  return {
    parentRef: {
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: 'inference-gateway',
      namespace: 'kinference',
    },
    controllerName: 'example.net/gateway',
    conditions: [
      {
        type: 'Accepted',
        status: 'True',
        reason: 'Accepted',
        message,
        observedGeneration: 1,
        lastTransitionTime: '2026-01-02T03:04:05Z',
      },
    ],
  }
}

/** A Kinference pool that takes its pods and ports from upstream pool `name`. */
function referringPool(name: string, upstreamName: string): KubeObject {
  return {
    apiVersion: kinference,
    kind: 'InferencePool',
    metadata: { name, namespace: 'kinference' },
    spec: {
      upstreamPoolRef: { name: upstreamName },
      models: [{ name: 'qwen3-8b', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
      gpuProfile: 'l40s-27b-fp8',
      routing: { strategy: 'least-request' },
    },
  }
}

type Parent = { controllerName?: string; conditions?: Record<string, unknown>[] }

describe('upstream InferencePools (inference.networking.k8s.io/v1) naming our Endpoint Picker', () => {
  const cluster = useControllerCluster([], { upstreamPools: true })
  const parentsOf = (name: string): Parent[] =>
    ((
      cluster.server.objects.get(upstream, 'inferencepools', 'kinference', name)?.status as
        | { parents?: Parent[] }
        | undefined
    )?.parents ?? []) as Parent[]
  const ours = (name: string) => parentsOf(name).find((p) => p.controllerName === eppControllerName)
  const addGiePods = () => {
    cluster.addPod('gie-0', '10.7.0.1', 'gie')
    cluster.addPod('gie-1', '10.7.0.2', 'gie')
    cluster.putSlice('gie-abcde', [
      { name: 'gie-0', ip: '10.7.0.1' },
      { name: 'gie-1', ip: '10.7.0.2' },
    ])
  }

  it('become pools of defaults with one endpoint per pod and port; our entry sits beside a gateway’s', async () => {
    const { server } = cluster
    server.objects.create(upstream, 'inferencepools', {
      ...upstreamPool('gie-pool'),
      status: { parents: [gatewayParent('routes here')] },
    })
    server.objects.create(upstream, 'inferencepools', upstreamPool('elsewhere', 'other-epp', 'x'))
    addGiePods()
    const { store } = await cluster.start(uniquePrefix(), { eppService: epp })
    const live = await eventually(async () => {
      const published = await publishedOf(store)
      return published?.snapshot.endpoints['kinference/gie-pool']?.length === 4
        ? published
        : undefined
    })
    const { snapshot } = live
    expect(snapshot.pools['kinference/gie-pool']?.spec).toMatchObject({
      upstreamPoolRef: { name: 'gie-pool' },
      models: [{ name: '*', tokenizer: 'qwen3' }],
      routing: { strategy: 'gie-default' },
    })
    expect(
      snapshot.endpoints['kinference/gie-pool']?.map((e) => [e.name, e.http, e.metrics, e.events]),
    ).toEqual([
      ['gie-0:8000', 'http://10.7.0.1:8000', 'http://10.7.0.1:8000/metrics', null],
      ['gie-0:8001', 'http://10.7.0.1:8001', 'http://10.7.0.1:8001/metrics', null],
      ['gie-1:8000', 'http://10.7.0.2:8000', 'http://10.7.0.2:8000/metrics', null],
      ['gie-1:8001', 'http://10.7.0.2:8001', 'http://10.7.0.2:8001/metrics', null],
    ])
    // The pool naming another Endpoint Picker is not ours: no pool, no status.
    expect(Object.keys(snapshot.pools)).toEqual(['kinference/gie-pool'])
    const entry = await eventually(() => ours('gie-pool'))
    expect(parentsOf('gie-pool')[0]).toEqual(gatewayParent('routes here'))
    expect(entry).toEqual({
      parentRef: { group: '', kind: 'Service', name: epp, namespace: 'kinference' },
      controllerName: eppControllerName,
      conditions: [
        expect.objectContaining({
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
          observedGeneration: 1,
        }),
        expect.objectContaining({
          type: 'ResolvedRefs',
          status: 'True',
          reason: 'ResolvedRefs',
          observedGeneration: 1,
        }),
      ],
    })
    expect(
      server.objects.get(upstream, 'inferencepools', 'kinference', 'elsewhere')?.status,
    ).toBeUndefined()
  })

  it('takes strategy and models from a Kinference pool that names it', async () => {
    const { server } = cluster
    server.objects.create(upstream, 'inferencepools', upstreamPool('gie-pool'))
    putObject(server, kinference, 'inferencepools', referringPool('qwen-gie', 'gie-pool'))
    addGiePods()
    const { store } = await cluster.start(uniquePrefix(), { eppService: epp })
    const { snapshot } = await eventually(async () => {
      const published = await publishedOf(store)
      return published?.snapshot.endpoints['kinference/qwen-gie']?.length === 4
        ? published
        : undefined
    })
    expect(Object.keys(snapshot.pools)).toEqual(['kinference/qwen-gie'])
    expect(snapshot.pools['kinference/qwen-gie']?.spec).toMatchObject({
      upstreamPoolRef: { name: 'gie-pool' },
      models: [{ name: 'qwen3-8b' }],
      routing: { strategy: 'least-request' },
    })
    const entry = await eventually(() => ours('gie-pool'))
    expect(entry?.conditions?.[0]).toMatchObject({
      status: 'True',
      message: 'served as InferencePool.kinference.dev kinference/qwen-gie',
    })
    const pool = await eventually(() => {
      const object = cluster.pool('qwen-gie')
      return conditionOf(object, 'Ready')?.status === 'True' ? object : undefined
    })
    expect(conditionOf(pool, 'ResolvedRefs')?.status).toBe('True')
    // Pods, not endpoints: two pods on two ports each are two ready pods.
    expect(conditionOf(pool, 'Ready')?.message).toBe('2 of 2 selected pods ready')
    expect(pool.status).toMatchObject({ pods: 2, readyPods: 2 })
  })

  it('refuses a pool whose id a Kinference pool already has, which keeps it', async () => {
    const { server } = cluster
    server.objects.create(upstream, 'inferencepools', upstreamPool('qwen-27b'))
    const platform = yamlObjects('infra/k8s/examples/platform.yaml')
    for (const object of platform.filter((o) => o.kind === 'InferencePool'))
      putObject(server, kinference, 'inferencepools', object)
    const { store } = await cluster.start(uniquePrefix(), { eppService: epp })
    const entry = await eventually(() => ours('qwen-27b'))
    expect(entry?.conditions?.[0]).toMatchObject({
      type: 'Accepted',
      status: 'False',
      reason: 'NotSupportedByParent',
    })
    expect(entry?.conditions?.[1]).toMatchObject({
      type: 'ResolvedRefs',
      status: 'False',
      reason: 'InvalidExtensionRef',
    })
    const published = await eventually(() => publishedOf(store))
    // The Kinference pool keeps its id and its own selector.
    expect(published.snapshot.pools['kinference/qwen-27b']?.spec.selector).toEqual({
      matchLabels: { app: 'vllm-qwen-27b' },
    })
  })

  it('retries on 409 when another controller writes between our read and our write', async () => {
    const { server } = cluster
    server.objects.create(upstream, 'inferencepools', {
      ...upstreamPool('gie-pool'),
      status: { parents: [gatewayParent('first')] },
    })
    addGiePods()
    let raced = false
    const stop = server.beforeRequest((request) => {
      if (raced || request.method !== 'PUT' || request.subresource !== 'status') return
      if (request.resource !== 'inferencepools' || request.group !== 'inference.networking.k8s.io')
        return
      raced = true
      // The gateway controller writes its entry after our GET, before our PUT lands.
      const current = server.objects.get(upstream, 'inferencepools', 'kinference', 'gie-pool')
      if (!current) return
      server.objects.update(
        upstream,
        'inferencepools',
        { ...current, status: { parents: [gatewayParent('second')] } },
        { subresource: 'status' },
      )
    })
    server.requests.length = 0
    await cluster.start(uniquePrefix(), { eppService: epp })
    await eventually(() => ours('gie-pool'))
    stop()
    expect(parentsOf('gie-pool')[0]).toEqual(gatewayParent('second'))
    expect(parentsOf('gie-pool')).toHaveLength(2)
    const statusCalls = server.requests
      .filter((r) => r.subresource === 'status' && r.group === 'inference.networking.k8s.io')
      .map((r) => `${r.method} ${r.code}`)
    expect(statusCalls.slice(0, 4)).toEqual(['GET 200', 'PUT 409', 'GET 200', 'PUT 200'])
  })

  it('removes our entry, and the pool, when the pool stops naming us', async () => {
    const { server } = cluster
    server.objects.create(upstream, 'inferencepools', {
      ...upstreamPool('gie-pool'),
      status: { parents: [gatewayParent('routes here')] },
    })
    addGiePods()
    const { store } = await cluster.start(uniquePrefix(), { eppService: epp })
    const before = await eventually(() => ours('gie-pool'))
    const firstTransition = before?.conditions?.[0]?.lastTransitionTime
    putObject(server, upstream, 'inferencepools', upstreamPool('gie-pool', 'other-epp'))
    await eventually(() => (ours('gie-pool') ? undefined : true))
    expect(parentsOf('gie-pool')).toEqual([gatewayParent('routes here')])
    await eventually(async () => {
      const published = await publishedOf(store)
      return published && !published.snapshot.pools['kinference/gie-pool']
    })
    // Naming us again brings the entry back, at the new generation.
    putObject(server, upstream, 'inferencepools', upstreamPool('gie-pool'))
    const again = await eventually(() => ours('gie-pool'))
    expect(again?.conditions?.[0]).toMatchObject({ status: 'True', observedGeneration: 3 })
    expect(typeof firstTransition).toBe('string')
  })
})

describe('a cluster without the upstream InferencePool CRD', () => {
  const platform = yamlObjects('infra/k8s/examples/platform.yaml')
  const cluster = useControllerCluster(platform)

  it('still publishes Kinference pools, logs once, and takes upstream pools in once the CRD is applied', async () => {
    const { server } = cluster
    const c = await cluster.start(uniquePrefix(), { eppService: epp, upstreamRetryMs: 50 })
    const published = await eventually(() => publishedOf(c.store))
    expect(Object.keys(published.snapshot.pools).sort()).toEqual([
      'kinference/qwen-27b',
      'kinference/qwen-8b',
    ])
    const asked = () =>
      server.requests.filter(
        (r) =>
          r.group === 'inference.networking.k8s.io' && r.resource === 'inferencepools' && r.code,
      ).length
    await eventually(() => asked() >= 4)
    expect(c.logs.filter((line) => line.includes('is not served'))).toHaveLength(1)
    const ready = await fetch(`${c.controller.url}/readyz`)
    expect(ready.status).toBe(200)
    // The CRD is applied while the controller runs: its pools are taken in.
    for (const crd of yamlObjects(upstreamPoolCrd))
      server.objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', crd)
    server.objects.create(upstream, 'inferencepools', upstreamPool('gie-pool'))
    await eventually(
      async () => (await publishedOf(c.store))?.snapshot.pools['kinference/gie-pool'],
    )
    expect(c.logs.some((line) => line.includes('is served now'))).toBe(true)
  })
})
