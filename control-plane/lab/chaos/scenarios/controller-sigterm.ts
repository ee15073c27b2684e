import { randomBytes } from 'node:crypto'
import {
  applyObjects,
  startTestCluster,
  yamlObjects,
} from '../../../../test/support/controller/controller-fixture.ts'
import { type KinfctlProcess, startKinfctl } from '../../../../test/support/e2e/kinfctl-process.ts'
import type { KubeApiServer } from '../../../../test/support/kube-api-server/start-kube-api-server.ts'
import { createRedisSnapshotStore } from '../../../config-store/redis-snapshot-store.ts'
import { timeUntil } from '../chaos-scenario.ts'
import type { ScenarioCheck } from '../scenario-result.ts'

export interface ControllerSigtermResult {
  checks: ScenarioCheck[]
  notes: string[]
  /** From the last change (after the leader stopped) until the follower published it. */
  convergedMs: number | null
}

const leaseOf = (server: KubeApiServer) =>
  (
    server.objects.get('coordination.k8s.io/v1', 'leases', 'kinference', 'kinference-controller')
      ?.spec as { holderIdentity?: string } | undefined
  )?.holderIdentity ?? null

/**
 * Two `kinfctl controller` replicas against the test API server, publishing to Redis,
 * while a pool's spec changes every 50 ms; SIGTERM to the leader in the middle. It must
 * exit 0, leave the Lease free (or already taken by the follower), and the follower
 * must lead and publish the last change. The Lease lasts 15 s (the default): a takeover
 * well within it can only come from the release.
 */
export async function controllerSigterm(options: {
  redisUrl: string
  changesMs: number
  nowMs: () => number
}): Promise<ControllerSigtermResult> {
  const { nowMs } = options
  const server = await startTestCluster()
  const platform = yamlObjects('infra/k8s/examples/platform.yaml')
  applyObjects(server, platform)
  const prefix = `kinf-chaos:${randomBytes(3).toString('hex')}:controller:`
  const store = await createRedisSnapshotStore({ redis: options.redisUrl, prefix })
  const processes: KinfctlProcess[] = []
  const start = (identity: string) => {
    const controller = startKinfctl(identity, [
      ...['controller', '--kubeconfig', server.kubeconfigPath, '--namespace', 'kinference'],
      ...['--redis', options.redisUrl, '--redis-prefix', prefix, '--listen', '127.0.0.1:0'],
      ...['--identity', identity, '--retry-period', '500ms', '--debounce', '20ms'],
    ])
    processes.push(controller)
    return controller
  }
  try {
    // Both at once: whichever takes the Lease first leads.
    const both = [start('controller-a'), start('controller-b')]
    await Promise.all(both.map((c) => c.waitFor(/running; probes and metrics on/, 30_000)))
    const leaderId = await timeUntil(async () => (leaseOf(server) ?? '') !== '', {
      limitMs: 30_000,
      nowMs,
    }).then(() => leaseOf(server) ?? '')
    const [leader, follower] = leaderId === 'controller-a' ? both : [...both].reverse()
    if (!leader || !follower) throw new Error('no controllers')
    const followerId = follower.name
    await leader.waitFor(/snapshot version \d+ .* published/, 30_000)
    const pool = platform.find((o) => o.kind === 'InferencePool') as {
      metadata: { name: string }
      spec: Record<string, unknown>
    }
    let last = 0
    let changing = true
    const changes = (async () => {
      while (changing) {
        last++
        applyObjects(server, [{ ...pool, spec: { ...pool.spec, ttftSloMs: 1_000 + last } }])
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, options.changesMs / 2))
    const signalled = nowMs()
    const code = await leader.stop('SIGTERM')
    const exitMs = nowMs() - signalled
    const holderAtExit = leaseOf(server)
    const ledMs = await timeUntil(async () => leaseOf(server) === followerId, {
      limitMs: 20_000,
      nowMs,
    })
    await new Promise((resolve) => setTimeout(resolve, options.changesMs / 2))
    changing = false
    await changes
    const wanted = 1_000 + last
    const convergedMs = await timeUntil(
      async () => {
        const live = await store.current()
        const spec = live?.ok
          ? live.published.snapshot.pools[`kinference/${pool.metadata.name}`]?.spec
          : undefined
        return spec?.ttftSloMs === wanted
      },
      { limitMs: 20_000, nowMs },
    )
    const followerCode = await follower.stop('SIGTERM')
    return {
      convergedMs,
      checks: [
        {
          name: 'the leader exits 0 on SIGTERM while changes apply',
          ok: code === 0,
          detail: `exit code ${code} after ${exitMs.toFixed(0)} ms`,
        },
        {
          name: 'the Lease is released at exit',
          ok: holderAtExit === '' || holderAtExit === followerId,
          detail: `holder at exit: "${holderAtExit}"; the follower led ${ledMs === null ? 'never (within 20 s)' : `${ledMs.toFixed(0)} ms after SIGTERM`} (Lease duration 15 s, retry period 0.5 s)`,
        },
        {
          name: 'the follower publishes the last change',
          ok: convergedMs !== null,
          detail: `ttftSloMs ${wanted} (change ${last}) ${convergedMs === null ? 'never published' : 'published'}`,
        },
        {
          name: 'the follower exits 0 on SIGTERM too, and frees the Lease',
          ok: followerCode === 0 && leaseOf(server) === '',
          detail: `exit code ${followerCode}, holder "${leaseOf(server)}"`,
        },
      ],
      notes: [
        `controller: SIGTERM to the leader after ${last} changes in flight; it exited ${code} in ${exitMs.toFixed(0)} ms`,
      ],
    }
  } finally {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')))
    await store.close()
    await server.close()
  }
}
