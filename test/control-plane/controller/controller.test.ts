import { describe, expect, it } from 'vitest'
import { createCloudflareKvPublisher } from '../../../control-plane/config-store/cloudflare-kv-publisher.ts'
import { createKvSnapshotLoader } from '../../../workers/worker/kv-snapshot-loader.ts'
import {
  applyObjects,
  conditionOf,
  eventually,
  kinference,
  publishedOf,
  yamlObjects,
} from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'
import { startFakeCloudflareKv } from '../../support/fake-cloudflare-kv.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const platform = yamlObjects('infra/k8s/examples/platform.yaml')
const burst = yamlObjects('infra/k8s/examples/burst-to-bedrock.yaml')
const { uniquePrefix } = useRedisTestNamespaces()

describe('kinfctl controller against a test API server', () => {
  const cluster = useControllerCluster([...platform, ...burst])

  it('publishes a snapshot with the ready endpoints and writes conditions', async () => {
    cluster.addPod('qwen-27b-0', '10.1.0.1')
    cluster.addPod('qwen-27b-1', '10.1.0.2')
    cluster.putSlice('vllm-27b-abcde', [
      { name: 'qwen-27b-0', ip: '10.1.0.1' },
      { name: 'qwen-27b-1', ip: '10.1.0.2', ready: false },
    ])
    const { store } = await cluster.start(uniquePrefix())
    const live = await eventually(async () => {
      const published = await publishedOf(store)
      return published?.snapshot.endpoints['kinference/qwen-27b']?.length === 1
        ? published
        : undefined
    })
    expect(live.snapshot.endpoints['kinference/qwen-27b']?.[0]).toMatchObject({
      name: 'qwen-27b-0',
      http: 'http://10.1.0.1:8000',
    })
    const pool = await eventually(() => {
      const object = cluster.pool('qwen-27b')
      return conditionOf(object, 'Published')?.status === 'True' ? object : undefined
    })
    expect(conditionOf(pool, 'Accepted')).toMatchObject({ status: 'True', observedGeneration: 1 })
    expect(conditionOf(pool, 'Ready')).toMatchObject({
      status: 'True',
      message: '1 of 2 selected pods ready',
    })
    expect(conditionOf(pool, 'Published')?.message).toContain(`snapshot version ${live.version}`)
    expect(pool.status).toMatchObject({ readyPods: 1, pods: 2 })
  })

  it('rejects a broken change with the field path, keeps the previous version live, and does not loop', async () => {
    const { store, controller } = await cluster.start(uniquePrefix())
    const first = await eventually(() => publishedOf(store))
    const broken = structuredClone(burst[0]) as unknown as {
      spec: { rules: { action: { burst: { local: string[] } } }[] }
    }
    const rule = broken.spec.rules[0]
    if (rule) rule.action.burst.local = ['no-such-backend']
    const { server } = cluster
    applyObjects(server, [broken as never])
    const policy = await eventually(() => {
      const object = server.objects.get(
        kinference,
        'inferencepolicies',
        'kinference',
        'burst-to-bedrock',
      )
      return conditionOf(object, 'Accepted')?.status === 'False' ? object : undefined
    })
    expect(conditionOf(policy, 'Accepted')?.message).toContain(
      'spec.rules[0].action.burst.local[0]: GatewayBackend "no-such-backend" not found',
    )
    expect(conditionOf(policy, 'Accepted')).toMatchObject({
      reason: 'InvalidRefs',
      observedGeneration: 2,
    })
    expect(conditionOf(policy, 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'RefNotFound',
    })
    expect(conditionOf(policy, 'Published')?.message).toContain(
      'generation 1 live since snapshot version',
    )
    const events = await eventually(() => {
      const list = server.objects.list('v1', 'events', 'kinference')
      return list.some((e) => e.reason === 'Rejected') ? list : undefined
    })
    expect(events.find((e) => e.reason === 'Rejected')).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'InferencePolicy', name: 'burst-to-bedrock' },
    })
    await controller.idle()
    const read = await store.current()
    expect(read?.ok && read.published.version).toBe(first.version)
    // Our own status writes trigger no further writes.
    server.requests.length = 0
    await new Promise((resolve) => setTimeout(resolve, 500))
    await controller.idle()
    expect(
      server.requests.filter((r) => r.subresource === 'status' && r.verb === 'update'),
    ).toEqual([])
    // A pod joining one pool rewrites that pool's status alone, not every resource's.
    cluster.addPod('solo', '10.1.1.1', 'vllm-qwen-8b')
    cluster.putSlice('vllm-8b-abcde', [{ name: 'solo', ip: '10.1.1.1' }])
    await eventually(() => cluster.poolCondition('qwen-8b', 'Ready')?.status === 'True')
    await controller.idle()
    const writes = server.requests.filter((r) => r.subresource === 'status' && r.verb === 'update')
    expect(writes.map((r) => `${r.resource}/${r.name}`)).toEqual(['inferencepools/qwen-8b'])
  })

  it('publishes the same snapshot to Workers KV, where the Worker verifies it, retrying failures', async () => {
    const kv = await startFakeCloudflareKv()
    try {
      const cloudflare = createCloudflareKvPublisher({
        accountId: kv.accountId,
        namespaceId: kv.namespaceId,
        apiToken: kv.apiToken,
        baseUrl: kv.baseUrl,
      })
      kv.failNext(2, { status: 503 })
      const { store, controller } = await cluster.start(uniquePrefix(), {}, { cloudflare })
      const loader = createKvSnapshotLoader(
        { get: async (key) => kv.values.get(key)?.value ?? null },
        { ttlMs: 0, nowMs: Date.now },
      )
      const fromKv = await eventually(() => loader().catch(() => undefined), 15_000, 'KV')
      const read = await store.current()
      expect(read?.ok && read.published.hash).toBe(fromKv.hash)
      expect(kv.values.get('snapshot')?.metadata).toMatchObject({ hash: fromKv.hash })
      expect(controller.metrics.registry.render()).toMatch(
        /kinference_controller_publish_failures_total\{target="cloudflare-kv"\} [1-9]/,
      )
    } finally {
      await kv.close()
    }
  })
})
