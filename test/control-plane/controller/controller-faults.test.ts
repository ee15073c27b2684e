import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  applyObjects,
  conditionOf,
  eventually,
  type InProcessController,
  kinference,
  podObject,
  sliceObject,
  startInProcessController,
  startTestCluster,
  yamlObjects,
} from '../../support/controller/controller-fixture.ts'
import type { KubeApiServer } from '../../support/kube-api-server/start-kube-api-server.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { startTcpProxy } from '../../support/tcp-proxy.ts'

const platform = yamlObjects('infra/k8s/examples/platform.yaml')
const burst = yamlObjects('infra/k8s/examples/burst-to-bedrock.yaml')
const { uniquePrefix } = useRedisTestNamespaces()
const redisPort = Number(new URL(redisUrl).port || 6379)

describe('the controller under faults', () => {
  let server: KubeApiServer
  const running: InProcessController[] = []
  beforeEach(async () => {
    server = await startTestCluster()
    applyObjects(server, [...platform, ...burst])
  })
  afterEach(async () => {
    for (const controller of running.splice(0)) await controller.close()
    await server.close()
  })
  const start = async (prefix: string, options = {}, url = redisUrl) => {
    const controller = await startInProcessController(server, { url, prefix }, options)
    running.push(controller)
    return controller
  }
  const endpointsIn = async (c: InProcessController) => {
    const read = await c.store.current()
    return read?.ok
      ? (read.published.snapshot.endpoints['kinference/qwen-27b'] ?? []).map((e) => e.name)
      : null
  }
  const addPod = (name: string, ip: string) =>
    server.objects.create('v1', 'pods', podObject(name, 'kinference', { app: 'vllm-qwen-27b' }, ip))
  const setSlice = (pods: { name: string; ip: string }[]) => {
    const existing = server.objects.get(
      'discovery.k8s.io/v1',
      'endpointslices',
      'kinference',
      'vllm-27b-x1',
    )
    const slice = sliceObject('vllm-27b-x1', 'kinference', pods)
    if (existing)
      server.objects.update('discovery.k8s.io/v1', 'endpointslices', {
        ...slice,
        metadata: {
          ...(slice.metadata as object),
          resourceVersion: (existing.metadata as { resourceVersion: string }).resourceVersion,
        },
      })
    else server.objects.create('discovery.k8s.io/v1', 'endpointslices', slice)
  }

  it('restarts dropped watches and relists after 410, converging on what changed meanwhile', async () => {
    addPod('p0', '10.2.0.1')
    setSlice([{ name: 'p0', ip: '10.2.0.1' }])
    const c = await start(uniquePrefix(), { watchTimeoutSeconds: 60 })
    await eventually(async () => (await endpointsIn(c))?.join() === 'p0')
    const versions: string[][] = []
    const watcher = setInterval(async () => versions.push((await endpointsIn(c)) ?? []), 20)
    server.dropWatches()
    addPod('p1', '10.2.0.2')
    setSlice([
      { name: 'p0', ip: '10.2.0.1' },
      { name: 'p1', ip: '10.2.0.2' },
    ])
    await eventually(
      async () => (await endpointsIn(c))?.join() === 'p0,p1',
      15_000,
      'p1 after dropped watches',
    )
    server.compactHistory()
    server.dropWatches()
    setSlice([{ name: 'p1', ip: '10.2.0.2' }])
    await eventually(
      async () => (await endpointsIn(c))?.join() === 'p1',
      15_000,
      'p0 gone after 410',
    )
    clearInterval(watcher)
    expect(c.controller.metrics.registry.render()).toMatch(
      /kinference_controller_watch_restarts_total\{kind="EndpointSlice"\} [1-9]/,
    )
    // Never a snapshot without pools: each one read is a whole configuration.
    expect(versions.every((names) => names.length > 0)).toBe(true)
  })

  it('reports a Redis outage on status and in metrics, and publishes when Redis returns', async () => {
    const proxy = await startTcpProxy(redisPort)
    try {
      const c = await start(uniquePrefix(), {}, proxy.url)
      await eventually(async () => (await endpointsIn(c)) !== null)
      await proxy.stop()
      addPod('p0', '10.2.0.1')
      setSlice([{ name: 'p0', ip: '10.2.0.1' }])
      const pool = await eventually(
        () => {
          const object = server.objects.get(kinference, 'inferencepools', 'kinference', 'qwen-27b')
          return conditionOf(object, 'Published')?.reason === 'PublishFailed' ? object : undefined
        },
        15_000,
        'PublishFailed',
      )
      expect(conditionOf(pool, 'Published')?.message).toContain('stays live')
      expect(c.controller.metrics.registry.render()).toMatch(
        /kinference_controller_publish_failures_total\{target="redis"\} [1-9]/,
      )
      await proxy.start()
      await eventually(
        async () => (await endpointsIn(c))?.join() === 'p0',
        15_000,
        'publish after Redis returns',
      )
      await eventually(
        () =>
          conditionOf(
            server.objects.get(kinference, 'inferencepools', 'kinference', 'qwen-27b'),
            'Published',
          )?.status === 'True',
      )
    } finally {
      await proxy.stop()
    }
  })

  it('hands over to the other replica when the leader stops', async () => {
    const prefix = uniquePrefix()
    const a = await start(prefix)
    const b = await start(prefix)
    const leader = await eventually(() =>
      a.controller.isLeader() ? a : b.controller.isLeader() ? b : undefined,
    )
    const follower = leader === a ? b : a
    expect(follower.controller.isLeader()).toBe(false)
    // Probes pass on followers too: a follower must not be restarted for not leading.
    for (const path of ['/readyz', '/healthz'])
      expect((await fetch(`${follower.controller.url}${path}`)).status).toBe(200)
    await leader.close()
    running.splice(running.indexOf(leader), 1)
    await eventually(() => follower.controller.isLeader(), 5_000, 'the follower to lead')
    addPod('p0', '10.2.0.1')
    setSlice([{ name: 'p0', ip: '10.2.0.1' }])
    await eventually(
      () =>
        conditionOf(
          server.objects.get(kinference, 'inferencepools', 'kinference', 'qwen-27b'),
          'Ready',
        )?.status === 'True',
      10_000,
      'status from the new leader',
    )
    const lease = server.objects.get(
      'coordination.k8s.io/v1',
      'leases',
      'kinference',
      'kinference-controller',
    )
    expect(
      (lease?.spec as { leaseTransitions?: number } | undefined)?.leaseTransitions,
    ).toBeGreaterThanOrEqual(1)
  })
})
