import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import type { Log } from '../../../shared/logging/log.ts'
import type { PodReport } from '../../../shared/routing/pool-router.ts'
import type { PodView, ReplicaPodViews } from '../../../shared/state/pod-state.ts'
import type { StateStore } from '../../../shared/state/state-store.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'

export interface PodStatePublisherOptions {
  store: Pick<StateStore, 'writePodViews'>
  /** This scorer process among the replicas (its key in the store). */
  replica: string
  intervalMs: number
  /** How long a view outlives its replica: a few intervals. */
  ttlMs: number
  pools: () => readonly PoolRuntime[]
  index: Pick<KvIndex, 'storedBlocks'>
  log: Log
  /** A write failed (a counter). */
  onFailure?: () => void
}

export interface PodStatePublisher {
  /** Writes this replica's view now. */
  publish(): Promise<void>
  stop(): Promise<void>
}

/**
 * Writes this replica's view of every pod it routes to, and of its pools' conditions
 * (TokenizerReady, TokenizationAgrees), every interval, with a TTL: a
 * replica that stops is forgotten once its view expires. Reported once per outage.
 */
export function startPodStatePublisher(options: PodStatePublisherOptions): PodStatePublisher {
  let failing = false
  let running: Promise<void> = Promise.resolve()
  const publishNow = async () => {
    try {
      const views = await replicaPodViews(options.replica, options.pools(), options.index)
      await options.store.writePodViews(views, options.ttlMs)
      failing = false
    } catch (error) {
      options.onFailure?.()
      if (!failing) options.log(`pod state: ${(error as Error).message}`, { level: 'warn' })
      failing = true
    }
  }
  const publish = () => {
    running = running.then(publishNow)
    return running
  }
  const timer = setInterval(publish, options.intervalMs)
  timer.unref()
  return {
    publish,
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}

/** This replica's view of its pools' pods now, with the index's block counts, and their conditions. */
export async function replicaPodViews(
  replica: string,
  pools: readonly PoolRuntime[],
  index: Pick<KvIndex, 'storedBlocks'>,
): Promise<ReplicaPodViews> {
  const wallMs = Date.now()
  const nowMs = performance.now()
  const pods: PodView[] = []
  for (const pool of pools) {
    const reports = pool.router.podReports(nowMs)
    const blocks = await index.storedBlocks(reports.map((report) => report.name))
    reports.forEach((report, i) => {
      pods.push(podViewOf(pool, report, blocks[i] ?? null, wallMs))
    })
  }
  const poolViews = pools.map((pool) => ({ pool: pool.id, conditions: pool.conditions(wallMs) }))
  return { replica, writtenAtMs: wallMs, pods, pools: poolViews }
}

function podViewOf(
  pool: PoolRuntime,
  report: PodReport,
  blocksIndexed: number | null,
  wallMs: number,
): PodView {
  const counters = pool.ingestorCounters(report.name)
  const position = pool.feedPosition(report.name)
  const { metrics } = report
  return {
    pool: pool.id,
    pod: report.name,
    strategy: pool.router.strategy,
    healthy: report.healthy,
    indexReady: report.indexReady,
    trust: report.trust,
    drift: report.drift,
    driftObservations: report.driftObservations,
    blocksIndexed,
    kvCacheUsage: metrics?.kvCacheUsage ?? null,
    running: metrics?.running ?? null,
    waiting: metrics?.waiting ?? null,
    metricsAtMs: metrics ? wallMs - metrics.ageMs : null,
    inFlight: report.load.inFlight,
    pending: report.load.pendingRequests,
    ttft: report.ttft,
    events:
      counters && position
        ? {
            // A replay that found nothing leaves the seq before 0: no batch yet.
            lastSeq: position.seq === null || position.seq < 0n ? null : position.seq.toString(),
            lastBatchAtMs: position.atMs,
            batches: counters.batches,
            replays: counters.replays,
            gaps: counters.gaps,
            restarts: counters.restarts,
          }
        : null,
  }
}
