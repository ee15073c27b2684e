import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { canonicalJson } from '../../../../shared/config/canonical-json.ts'
import type { ConfigSnapshot } from '../../../../shared/config/config-snapshot.ts'
import {
  type KubeApiServer,
  startKubeApiServer,
} from '../../../../test/support/kube-api-server/start-kube-api-server.ts'
import { ScorerConfig } from '../../../scorer/scorer-config.ts'
import { type RunningScorer, startScorer } from '../../../scorer/start-scorer.ts'
import { BenchCluster, type BenchShape, benchNamespace } from './bench-cluster.ts'
import { type ProcessMemory, startControllerProcess } from './controller-process.ts'
import {
  type ControllerTotals,
  checkFirstSnapshot,
  controllerTotals,
  histogramMeanMs,
} from './controller-totals.ts'
import { measureSnapshotCosts, type SnapshotCosts } from './measure-snapshot-costs.ts'
import { startPropagationProbe } from './propagation-probe.ts'
import { type ChangeRecord, runChanges, statusWrites, withTimeout } from './run-changes.ts'

export interface ControllerBenchOptions {
  seed: number
  perKind: number
  shape: BenchShape
  redisUrl: string
  debounce: string
  quietMs: number
  /** Pause after the scorer starts: its first scrapes and replays of 1,000 pods. */
  warmupMs: number
  controllerNodeOptions: string | null
  random: () => number
  log: (line: string) => void
}

export interface ControllerBenchRun {
  snapshot: { bytes: number; pools: number; policies: number; backends: number; endpoints: number }
  firstPublish: {
    /** Spawn to "running": Node start, imports, every informer's first list. */
    startMs: number
    /** "running" to the follower holding version 1: lease, compile, publish, read. */
    firstVersionMs: number
    totalMs: number
    firstReconcileMs: number
    scorerStartMs: number
  }
  memory: { afterFirst: ProcessMemory; end: ProcessMemory }
  changes: ChangeRecord[]
  totals: ControllerTotals
  firstReconcileStatusWrites: number
  /** This process's event-loop delay during the changes, ms: the follower waits on it. */
  benchEventLoop: { p50Ms: number; p99Ms: number; maxMs: number }
  costs: SnapshotCosts
}

/**
 * The controller benchmark: the cluster in a test API server, `kinfctl controller` in its
 * own process, a follower and a scorer here; the first publish, then sequential changes.
 */
export async function measureController(
  options: ControllerBenchOptions,
): Promise<ControllerBenchRun> {
  const prefix = `kinf-bench-controller:${randomBytes(4).toString('hex')}:`
  const closers: (() => Promise<unknown>)[] = []
  const redis = new Redis(options.redisUrl)
  closers.push(async () => {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    redis.disconnect()
  })
  const defer = (close: () => Promise<unknown>) => {
    closers.push(close)
  }
  try {
    const server = await startKubeApiServer({
      namespaces: [benchNamespace],
      crds: [join('infra', 'k8s', 'crds')],
    })
    defer(() => server.close())
    const cluster = new BenchCluster(server, options.shape)
    cluster.seed()
    const probe = startPropagationProbe({ redisUrl: options.redisUrl, prefix, log: options.log })
    defer(() => probe.close())
    const spawnedAt = performance.now()
    const controller = await startControllerProcess({
      ...{ kubeconfig: server.kubeconfigPath, redisUrl: options.redisUrl, prefix },
      ...{ namespace: benchNamespace, debounce: options.debounce },
      nodeOptions: options.controllerNodeOptions,
    })
    defer(() => controller.stop())
    const runningAt = performance.now()
    const first = await withTimeout(probe.first, 120_000, 'the first snapshot')
    const { snapshot } = first.published
    const counts = checkFirstSnapshot(snapshot, cluster.expected())
    const firstWrites = await settleFirst(server, options.quietMs)
    const afterFirst = await controller.memory()
    const before = await controller.metrics()
    // Before the scorer starts and the changes fill this process's heap: the steps' own cost.
    const costs = await measureSnapshotCosts(snapshot, { url: options.redisUrl, prefix })
    const scorerStartedAt = performance.now()
    const scorer = await startBenchScorer(snapshot, options.log)
    defer(() => scorer.close())
    const scorerStartMs = performance.now() - scorerStartedAt
    probe.attach(scorer)
    await new Promise((resolve) => setTimeout(resolve, options.warmupMs))
    const versionBefore = Number(await redis.get(`${prefix}config:version`))
    const apiBefore = statusWrites(server)
    const loop = monitorEventLoopDelay({ resolution: 10 })
    loop.enable()
    const changes = await runChanges({
      ...{ server, cluster, probe, controller, perKind: options.perKind },
      ...{ random: options.random, quietMs: options.quietMs, timeoutMs: 60_000, log: options.log },
    })
    loop.disable()
    const totals = await controllerTotals(controller, before, {
      statusWritesApi: statusWrites(server) - apiBefore,
      versions: Number(await redis.get(`${prefix}config:version`)) - versionBefore,
    })
    const end = await controller.memory()
    return {
      snapshot: { ...counts, bytes: Buffer.byteLength(canonicalJson(snapshot)) },
      firstPublish: {
        startMs: runningAt - spawnedAt,
        firstVersionMs: first.at - runningAt,
        totalMs: first.at - spawnedAt,
        firstReconcileMs: histogramMeanMs(before, 'kinference_controller_reconcile_seconds'),
        scorerStartMs,
      },
      memory: { afterFirst, end },
      changes,
      totals,
      firstReconcileStatusWrites: firstWrites,
      // The histogram holds the time between samples: the 10 ms interval is not delay.
      benchEventLoop: {
        p50Ms: Math.max(0, loop.percentile(50) / 1e6 - 10),
        p99Ms: Math.max(0, loop.percentile(99) / 1e6 - 10),
        maxMs: Math.max(0, loop.max / 1e6 - 10),
      },
      costs,
    }
  } finally {
    for (const close of closers.reverse())
      await close().catch((error: unknown) => options.log(`controller bench: ${String(error)}`))
  }
}

/** The first reconcile's status writes (every resource's conditions), until quiet. */
async function settleFirst(server: KubeApiServer, quietMs: number): Promise<number> {
  let seen = -1
  while (statusWrites(server) !== seen) {
    seen = statusWrites(server)
    await new Promise((resolve) => setTimeout(resolve, Math.max(quietMs, 500)))
  }
  return seen
}

async function startBenchScorer(
  snapshot: ConfigSnapshot,
  log: (line: string) => void,
): Promise<RunningScorer> {
  const config = ScorerConfig.parse({
    host: '127.0.0.1',
    port: 0,
    signingSecrets: [],
    allowUnsigned: true,
    snapshot,
  })
  // The pods are unroutable: every connect, replay and scrape fails and says so. Not printed.
  const scorer = await startScorer(config, () => {})
  log(`controller bench: scorer up with ${scorer.pools.length} pools`)
  return scorer
}
