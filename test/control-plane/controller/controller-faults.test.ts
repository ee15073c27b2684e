import { describe, expect, it } from 'vitest'
import {
  conditionOf,
  eventually,
  type InProcessController,
  publishedOf,
  yamlObjects,
} from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { startTcpProxy } from '../../support/tcp-proxy.ts'

const platform = yamlObjects('infra/k8s/examples/platform.yaml')
const burst = yamlObjects('infra/k8s/examples/burst-to-bedrock.yaml')
const { uniquePrefix } = useRedisTestNamespaces()
const redisPort = Number(new URL(redisUrl).port || 6379)

describe('the controller under faults', () => {
  const cluster = useControllerCluster([...platform, ...burst])
  const endpointsIn = async (c: InProcessController) => {
    const published = await publishedOf(c.store)
    return published
      ? (published.snapshot.endpoints['kinference/qwen-27b'] ?? []).map((e) => e.name)
      : null
  }
  const { addPod } = cluster
  const setSlice = (pods: { name: string; ip: string }[]) => cluster.putSlice('vllm-27b-x1', pods)

  it('restarts dropped watches and relists after 410, converging on what changed meanwhile', async () => {
    addPod('p0', '10.2.0.1')
    setSlice([{ name: 'p0', ip: '10.2.0.1' }])
    const c = await cluster.start(uniquePrefix(), { watchTimeoutSeconds: 60 })
    await eventually(async () => (await endpointsIn(c))?.join() === 'p0')
    const versions: string[][] = []
    const watcher = setInterval(async () => versions.push((await endpointsIn(c)) ?? []), 20)
    cluster.server.dropWatches()
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
    cluster.server.compactHistory()
    cluster.server.dropWatches()
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
      const c = await cluster.start(uniquePrefix(), {}, { redisUrl: proxy.url })
      await eventually(async () => (await endpointsIn(c)) !== null)
      await proxy.stop()
      addPod('p0', '10.2.0.1')
      setSlice([{ name: 'p0', ip: '10.2.0.1' }])
      const pool = await eventually(
        () => {
          const object = cluster.pool('qwen-27b')
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
      await eventually(() => cluster.poolCondition('qwen-27b', 'Published')?.status === 'True')
    } finally {
      await proxy.stop()
    }
  })

  it('hands over to the other replica when the leader stops', async () => {
    const prefix = uniquePrefix()
    const a = await cluster.start(prefix)
    const b = await cluster.start(prefix)
    const leader = await eventually(() =>
      a.controller.isLeader() ? a : b.controller.isLeader() ? b : undefined,
    )
    const follower = leader === a ? b : a
    expect(follower.controller.isLeader()).toBe(false)
    // Probes pass on followers too: a follower must not be restarted for not leading.
    for (const path of ['/readyz', '/healthz'])
      expect((await fetch(`${follower.controller.url}${path}`)).status).toBe(200)
    await cluster.stop(leader)
    await eventually(() => follower.controller.isLeader(), 5_000, 'the follower to lead')
    addPod('p0', '10.2.0.1')
    setSlice([{ name: 'p0', ip: '10.2.0.1' }])
    await eventually(
      () => cluster.poolCondition('qwen-27b', 'Ready')?.status === 'True',
      10_000,
      'status from the new leader',
    )
    const lease = cluster.server.objects.get(
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
