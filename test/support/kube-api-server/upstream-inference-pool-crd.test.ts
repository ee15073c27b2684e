import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { upstreamPoolCrd } from '../controller/controller-fixture.ts'
import { type KubeApiServer, startKubeApiServer } from './start-kube-api-server.ts'

const pools = '/apis/inference.networking.k8s.io/v1/namespaces/default/inferencepools'

let server: KubeApiServer

beforeAll(async () => {
  server = await startKubeApiServer({ namespaces: ['default'], crds: [upstreamPoolCrd] })
})

afterAll(async () => {
  await server?.close()
})

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { code: response.status, body: (await response.json()) as any }
}

const gatewayParent = {
  parentRef: {
    group: 'gateway.networking.k8s.io',
    kind: 'Gateway',
    name: 'gw',
    namespace: 'default',
  },
  controllerName: 'example.net/gateway',
  conditions: [
    {
      type: 'Accepted',
      status: 'True',
      reason: 'Accepted',
      message: '',
      observedGeneration: 1,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    },
  ],
}

describe('the upstream InferencePool CRD (inference.networking.k8s.io/v1)', () => {
  it('is discovered with its short name and status subresource', async () => {
    const { code, body } = await call('GET', '/apis/inference.networking.k8s.io/v1')
    expect(code).toBe(200)
    const names = body.resources.map((r: { name: string }) => r.name)
    expect(names).toEqual(expect.arrayContaining(['inferencepools', 'inferencepools/status']))
    const pool = body.resources.find((r: { name: string }) => r.name === 'inferencepools')
    expect(pool.shortNames).toEqual(['infpool'])
  })

  it('defaults endpointPickerRef, and a stale PUT of /status is a 409 Conflict', async () => {
    const created = await call('POST', pools, {
      apiVersion: 'inference.networking.k8s.io/v1',
      kind: 'InferencePool',
      metadata: { name: 'p' },
      spec: {
        selector: { matchLabels: { app: 'vllm' } },
        targetPorts: [{ number: 8000 }, { number: 8001 }],
        endpointPickerRef: { name: 'epp', port: { number: 9002 } },
      },
    })
    expect(created.code).toBe(201)
    expect(created.body.spec.endpointPickerRef).toEqual({
      group: '',
      kind: 'Service',
      name: 'epp',
      port: { number: 9002 },
      failureMode: 'FailClose',
    })
    const stale = created.body
    const first = await call('PUT', `${pools}/p/status`, {
      ...stale,
      status: { parents: [gatewayParent] },
    })
    expect(first.code).toBe(200)
    expect(first.body.status.parents).toEqual([gatewayParent])
    // The resourceVersion read before the first write is stale now: the write is refused.
    const second = await call('PUT', `${pools}/p/status`, { ...stale, status: { parents: [] } })
    expect(second.code).toBe(409)
    expect(second.body.reason).toBe('Conflict')
    const read = await call('GET', `${pools}/p/status`)
    expect(read.body.status.parents).toEqual([gatewayParent])
  })
})
