import { CoordinationV1Api } from '@kubernetes/client-node'
import { afterEach, describe, expect, it } from 'vitest'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import type { SnapshotSink } from '../../../control-plane/controller/config-reconciler.ts'
import { createControllerMetrics } from '../../../control-plane/controller/controller-metrics.ts'
import { LeaseElector } from '../../../control-plane/controller/lease-elector.ts'
import { createSnapshotSink } from '../../../control-plane/controller/snapshot-sink.ts'
import { startController } from '../../../control-plane/controller/start-controller.ts'
import {
  applyObjects,
  eventually,
  yamlObjects,
} from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'
import { type KinfctlProcess, startKinfctl } from '../../support/e2e/kinfctl-process.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const platform = yamlObjects('infra/k8s/examples/platform.yaml')
const burst = yamlObjects('infra/k8s/examples/burst-to-bedrock.yaml')
const { uniquePrefix } = useRedisTestNamespaces()

describe('the controller stopping gracefully', () => {
  const cluster = useControllerCluster([...platform, ...burst])
  const processes: KinfctlProcess[] = []
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop('SIGKILL')))
  })
  const holder = () =>
    (
      cluster.server.objects.get(
        'coordination.k8s.io/v1',
        'leases',
        'kinference',
        'kinference-controller',
      )?.spec as { holderIdentity?: string } | undefined
    )?.holderIdentity ?? null

  it('finishes the publish and status writes under way as the leader, then releases the Lease', async () => {
    const store = await createRedisSnapshotStore({ redis: redisUrl, prefix: uniquePrefix() })
    const metrics = createControllerMetrics(() => Date.now() / 1000)
    const real = createSnapshotSink({ store, cloudflare: null, metrics, nowMs: Date.now })
    let open = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    let publishing = false
    // Redis itself, held back until the test lets the publish through.
    const sink: SnapshotSink = {
      live: () => real.live(),
      async publish(snapshot) {
        publishing = true
        await gate
        return real.publish(snapshot)
      },
    }
    const controller = await startController(
      cluster.kubeConfig(),
      sink,
      {
        identity: 'stopping-leader',
        lease: { namespace: 'kinference', durationMs: 60_000, renewDeadlineMs: 40_000 },
        debounceMs: 10,
        host: '127.0.0.1',
        port: 0,
      },
      () => {},
      metrics,
    )
    try {
      await eventually(() => publishing, 10_000, 'the first publish to start')
      let closed = false
      const closing = controller.close().then(() => {
        closed = true
      })
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(closed).toBe(false)
      expect(holder()).toBe('stopping-leader')
      open()
      await closing
      const live = await store.current()
      expect(live?.ok).toBe(true)
      expect(cluster.poolCondition('qwen-27b', 'Published')).toMatchObject({ status: 'True' })
      expect(holder()).toBe('')
    } finally {
      open()
      await controller.close()
      await store.close()
    }
  })

  it('a stop while the first try for the Lease is in flight still leaves the Lease free', async () => {
    const elector = new LeaseElector(
      cluster.kubeConfig().makeApiClient(CoordinationV1Api),
      { namespace: 'kinference', identity: 'brief', retryPeriodMs: 100, renewDeadlineMs: 500 },
      {
        nowMs: Date.now,
        onError: () => {},
        onStartedLeading: () => {},
        onStoppedLeading: () => {},
      },
    )
    // The try is sent but not answered yet: it will create the Lease naming this replica.
    elector.start()
    await elector.stop()
    // Once the try has landed, whenever that is, the Lease must not name a stopped replica.
    await eventually(() => holder() !== null, 5_000, 'the Lease to exist')
    expect(holder()).toBe('')
    expect(elector.isLeader).toBe(false)
  })

  it('kinfctl controller: SIGTERM to the leader while changes apply exits 0, and the follower leads at once', async () => {
    const prefix = uniquePrefix()
    // A Lease of 60 s: the follower leading within 20 s can only be the release.
    const start = (identity: string) => {
      const controller = startKinfctl('controller', [
        'controller',
        '--kubeconfig',
        cluster.server.kubeconfigPath,
        '--namespace',
        'kinference',
        '--redis',
        redisUrl,
        '--redis-prefix',
        prefix,
        '--listen',
        '127.0.0.1:0',
        '--identity',
        identity,
        '--lease-duration',
        '60s',
        '--renew-deadline',
        '40s',
        '--retry-period',
        '200ms',
        '--debounce',
        '20ms',
      ])
      processes.push(controller)
      return controller
    }
    const leader = start('first')
    await leader.waitFor(/first is the leader/, 30_000)
    await leader.waitFor(/snapshot version \d+ .* published/, 30_000)
    const follower = start('second')
    await follower.waitFor(/running; probes and metrics on/, 30_000)
    // Changes keep coming while the leader stops: a pool's threshold, over and over.
    let changing = true
    const changes = (async () => {
      for (let n = 1; changing; n++) {
        const pool = structuredClone(
          platform.find((o) => o.kind === 'InferencePool'),
        ) as unknown as {
          spec: { ttftSloMs?: number }
        }
        pool.spec.ttftSloMs = 1_000 + n
        applyObjects(cluster.server, [pool as never])
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 300))
    const code = await leader.stop('SIGTERM')
    expect(code).toBe(0)
    expect(holder()).not.toBe('first')
    await follower.waitFor(/second is the leader/, 20_000)
    changing = false
    await changes
    expect(holder()).toBe('second')
    // The follower stops too: exit 0 and the Lease left free.
    expect(await follower.stop('SIGTERM')).toBe(0)
    expect(holder()).toBe('')
  }, 90_000)
})
