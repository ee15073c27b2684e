import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRedisSnapshotStore,
  type RedisSnapshotStore,
} from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { conditionOf, eventually, kinference } from '../../support/controller/controller-fixture.ts'
import {
  e2eNamespace,
  e2ePlatform,
  e2ePod,
  e2ePolicy,
  e2eSlice,
  manifest,
} from '../../support/e2e/e2e-resources.ts'
import {
  chat,
  e2eRun,
  startController,
  startE2eCluster,
  startEdgeProcess,
  startScorerProcess,
  startSim,
} from '../../support/e2e/e2e-stack.ts'
import type { KinfctlProcess } from '../../support/e2e/kinfctl-process.ts'
import { redisUrl } from '../../support/redis-test-namespaces.ts'
import { startTcpProxy } from '../../support/tcp-proxy.ts'

/**
 * The whole path with real processes: kubectl applies CRDs and resources to the test API
 * server, kinfctl controller publishes to Redis, kinfctl scorer and kinfctl edge follow
 * it, and single-pod simulators on 127.0.0.2-4 stand in for pods with their own IPs.
 */
const run = e2eRun()
const processes: KinfctlProcess[] = []
let cluster: Awaited<ReturnType<typeof startE2eCluster>>
let store: RedisSnapshotStore
let redis: Redis
let edgeUrl = ''
const [podA, podB, podC] = run.pods as [
  (typeof run.pods)[0],
  (typeof run.pods)[0],
  (typeof run.pods)[0],
]

const apply = async (name: string, objects: object[]) => {
  const result = await cluster.kubectl('apply', '-f', manifest(run.dir, name, objects))
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
}
const setSlice = (pods: { name: string; ip: string }[]) =>
  apply('slice', [e2eSlice(pods, run.ports)])
const liveEndpoints = async () => {
  const read = await store.current()
  return read?.ok
    ? (read.published.snapshot.endpoints[`${e2eNamespace}/e2e`] ?? []).map((e) => e.name).sort()
    : []
}
const indexedBlocks = (pod: string) => redis.hlen(`kinf:e:${pod}`)
const longPrompt = 'tell me about the history of the Kubernetes project and its community '.repeat(
  8,
)

beforeAll(async () => {
  cluster = await startE2eCluster(run)
  redis = new Redis(redisUrl)
  store = await createRedisSnapshotStore({ redis: redisUrl, prefix: run.prefix })
  const crds = await cluster.kubectl('apply', '-f', 'infra/k8s/crds/')
  expect(crds.code, crds.stderr).toBe(0)
  await apply('platform', e2ePlatform(run.ports))
  await apply('policy', [e2ePolicy(run.keySha256)])
  const sims = run.pods.map((pod) => startSim(run, pod))
  processes.push(...sims)
  await Promise.all(sims.map((sim) => sim.waitFor(/http=/)))
  await apply(
    'pods',
    run.pods.map((pod) => e2ePod(pod.name, pod.ip)),
  )
  await setSlice([podA, podB])
  const controller = startController(run, cluster.server.kubeconfigPath)
  processes.push(controller)
  await controller.waitFor(/running; probes and metrics on/)
  await eventually(async () => (await liveEndpoints()).length === 2, 30_000, 'the first snapshot')
  const scorer = startScorerProcess(run)
  processes.push(scorer)
  const scorerUrl = (await scorer.waitFor(/scorer listening on (http\S+)/))[1] as string
  const edge = startEdgeProcess(run, scorerUrl)
  processes.push(edge)
  edgeUrl = (await edge.waitFor(/edge listening on (http\S+)/))[1] as string
}, 180_000)

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')))
  await store?.close()
  const keys = await redis.keys(`${run.prefix}*`)
  if (keys.length > 0) await redis.del(...keys)
  await redis.del(...run.pods.map((pod) => `kinf:e:${pod.name}`))
  redis.disconnect()
  await cluster?.server.close()
})

describe('controller end to end (kubectl, controller, scorer, edge, simulated pods, Redis)', () => {
  it('serves a chat request on a pod of the slice; kubectl shows the printer columns and conditions', async () => {
    const answer = await chat(edgeUrl, run, 'hello from the e2e test')
    expect(answer.status, answer.body).toBe(200)
    expect([podA.name, podB.name]).toContain(answer.pod)
    const wait = await cluster.kubectl(
      'wait',
      '--for=condition=Ready',
      'inferencepool/e2e',
      '-n',
      e2eNamespace,
      '--timeout=20s',
    )
    expect(wait.code, wait.stderr).toBe(0)
    const table = await cluster.kubectl('get', 'inferencepools', '-n', e2eNamespace)
    expect(table.stdout).toMatch(/NAME\s+STRATEGY\s+PROFILE\s+READY PODS\s+READY\s+AGE/)
    expect(table.stdout).toMatch(/e2e\s+round-robin\s+l40s-27b-fp8\s+2\s+True/)
    const yaml = await cluster.kubectl(
      'get',
      'inferencepolicy',
      'e2e',
      '-n',
      e2eNamespace,
      '-o',
      'yaml',
    )
    expect(yaml.stdout).toMatch(/type: Accepted/)
    expect(yaml.stdout).toMatch(/reason: Published/)
  }, 60_000)

  it('a pod added to the slice takes traffic within 2 s; a removed one gets none and leaves the index', async () => {
    const added = Date.now()
    await setSlice([podA, podB, podC])
    let i = 0
    await eventually(
      async () => (await chat(edgeUrl, run, `question ${i++} for the new pod`)).pod === podC.name,
      2_000,
      'traffic on the added pod',
    )
    const tookMs = Date.now() - added
    await eventually(
      async () => (await indexedBlocks(podC.name)) > 0,
      5_000,
      "the added pod's blocks in the index",
    )
    const removed = Date.now()
    await setSlice([podA, podB])
    await eventually(
      async () => (await indexedBlocks(podC.name)) === 0,
      2_000,
      "the removed pod's blocks to leave",
    )
    const served = await Promise.all(
      Array.from({ length: 6 }, (_, k) => chat(edgeUrl, run, `after removal ${k}`)),
    )
    expect(served.map((s) => s.status)).toEqual(Array(6).fill(200))
    expect(served.map((s) => s.pod)).not.toContain(podC.name)
    console.log(
      `e2e: added pod served after ${tookMs} ms; removed pod gone from the index after ${Date.now() - removed} ms`,
    )
  }, 60_000)

  it('a changed policy is enforced by the edge within 2 s, without a restart', async () => {
    expect((await chat(edgeUrl, run, longPrompt)).status).toBe(200)
    const changed = Date.now()
    await apply('policy', [e2ePolicy(run.keySha256, { maxPromptTokens: 20 })])
    await eventually(
      async () => (await chat(edgeUrl, run, longPrompt)).status === 413,
      2_000,
      'the prompt cap',
    )
    console.log(`e2e: policy change enforced after ${Date.now() - changed} ms`)
    expect((await chat(edgeUrl, run, 'short')).status).toBe(200)
  }, 60_000)

  it('a broken policy is Accepted=False with its field path, and the previous one stays enforced', async () => {
    await apply('policy', [e2ePolicy(run.keySha256, { backend: 'no-such-backend' })])
    const wait = await cluster.kubectl(
      'wait',
      '--for=condition=Accepted=false',
      'inferencepolicy/e2e',
      '-n',
      e2eNamespace,
      '--timeout=20s',
    )
    expect(wait.code, wait.stderr).toBe(0)
    const yaml = await cluster.kubectl(
      'get',
      'inferencepolicy',
      'e2e',
      '-n',
      e2eNamespace,
      '-o',
      'yaml',
    )
    expect(yaml.stdout).toMatch(/reason: InvalidRefs/)
    const accepted = conditionOf(
      cluster.server.objects.get(kinference, 'inferencepolicies', e2eNamespace, 'e2e'),
      'Accepted',
    )
    expect(accepted?.message).toContain(
      'spec.rules[0].action.route.backends[0]: GatewayBackend "no-such-backend" not found',
    )
    expect(accepted?.message).toContain('the last accepted, stays live')
    expect((await chat(edgeUrl, run, longPrompt)).status).toBe(413)
    expect((await chat(edgeUrl, run, 'still served')).status).toBe(200)
    await apply('policy', [e2ePolicy(run.keySha256, { maxPromptTokens: 20 })])
  }, 60_000)

  it('relists after dropped watches and 410, and every published version is whole', async () => {
    const before = (await store.versions())[0]?.version ?? 0
    cluster.server.dropWatches()
    await setSlice([podA])
    await eventually(
      async () => (await liveEndpoints()).join() === podA.name,
      15_000,
      'one endpoint after dropped watches',
    )
    cluster.server.compactHistory()
    cluster.server.dropWatches()
    await setSlice([podA, podB])
    await eventually(
      async () => (await liveEndpoints()).length === 2,
      15_000,
      'two endpoints after 410',
    )
    const published = (await store.versions()).filter((entry) => entry.version > before)
    // At least the two changes above went out, each as a version of its own.
    expect(published.length).toBeGreaterThanOrEqual(2)
    for (const entry of published) {
      const read = await store.read(entry.version)
      if (!read?.ok) throw new Error(`version ${entry.version} does not verify`)
      const { snapshot } = read.published
      expect(Object.keys(snapshot.pools)).toEqual([`${e2eNamespace}/e2e`])
      expect(Object.keys(snapshot.backends)).toEqual([`${e2eNamespace}/e2e-local`])
      expect(Object.keys(snapshot.policies)).toEqual([`${e2eNamespace}/e2e`])
    }
  }, 60_000)

  it('a second replica takes the Lease within its duration when the leader is killed, and keeps status current', async () => {
    const second = startController(run, cluster.server.kubeconfigPath)
    processes.push(second)
    await second.waitFor(/running; probes and metrics on/)
    const holder = () =>
      (
        cluster.server.objects.get(
          'coordination.k8s.io/v1',
          'leases',
          e2eNamespace,
          'kinference-controller',
        )?.spec as { holderIdentity?: string } | undefined
      )?.holderIdentity ?? ''
    const first = processes.find((p) => p.name === 'controller' && p !== second) as KinfctlProcess
    const leaderId = holder()
    expect(leaderId).not.toBe('')
    const [leader, follower] = leaderId.endsWith(`_${first.child.pid}`)
      ? [first, second]
      : [second, first]
    const killed = Date.now()
    await leader.stop('SIGKILL')
    await eventually(
      () => holder() !== leaderId && holder().endsWith(`_${follower.child.pid}`),
      10_000,
      'the follower to hold the Lease',
    )
    const tookMs = Date.now() - killed
    console.log(
      `e2e: lease taken over ${tookMs} ms after the leader was killed (lease duration 3000 ms, retry period 500 ms)`,
    )
    expect(tookMs).toBeLessThan(3_000 + 2 * 500)
    await setSlice([podA, podB, podC])
    await eventually(
      () =>
        (
          cluster.server.objects.get(kinference, 'inferencepools', e2eNamespace, 'e2e')?.status as
            | { readyPods?: number }
            | undefined
        )?.readyPods === 3,
      10_000,
      'status from the new leader',
    )
  }, 60_000)

  it('retries while Redis is away for 10 s, reports it on status and in metrics, and publishes when it returns', async () => {
    for (const p of processes.filter((p) => p.name === 'controller')) await p.stop('SIGTERM')
    const proxy = await startTcpProxy(Number(new URL(redisUrl).port || 6379))
    try {
      const controller = startController(run, cluster.server.kubeconfigPath, proxy.url)
      processes.push(controller)
      const metricsUrl = (await controller.waitFor(/probes and metrics on (http\S+)/))[1] as string
      // Leading, and it has read what is live (the status may still be the last leader's).
      await controller.waitFor(/is the leader/, 15_000)
      await eventually(
        async () =>
          /kinference_controller_snapshot_version [1-9]/.test(
            await (await fetch(`${metricsUrl}/metrics`)).text(),
          ),
        15_000,
        'the new leader to read the live snapshot',
      )
      await proxy.stop()
      const away = Date.now()
      await setSlice([podA, podB])
      await eventually(
        () =>
          conditionOf(
            cluster.server.objects.get(kinference, 'inferencepools', e2eNamespace, 'e2e'),
            'Published',
          )?.reason === 'PublishFailed',
        15_000,
        'PublishFailed on status',
      )
      expect(await (await fetch(`${metricsUrl}/metrics`)).text()).toMatch(
        /kinference_controller_publish_failures_total\{target="redis"\} [1-9]/,
      )
      // The scorer and the edge keep serving on the last snapshot meanwhile.
      expect((await chat(edgeUrl, run, 'during the outage')).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10_000 - (Date.now() - away))))
      await proxy.start()
      await eventually(
        async () => (await liveEndpoints()).join() === [podA.name, podB.name].sort().join(),
        20_000,
        'publish after Redis returns',
      )
      await eventually(
        () =>
          conditionOf(
            cluster.server.objects.get(kinference, 'inferencepools', e2eNamespace, 'e2e'),
            'Published',
          )?.status === 'True',
        10_000,
      )
    } finally {
      await proxy.stop()
    }
  }, 90_000)
})
