import type { Log } from '../../../shared/logging/log.ts'
import type { VllmLoadSignals } from '../../metrics/extract-vllm-load-signals.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import { type ScrapeFailure, type ScrapeTarget, startMetricsScraper } from './metrics-scraper.ts'

export interface PoolMetricsScraperOptions {
  /** Every runtime routing to pods now, current ones first. */
  runtimes: () => readonly PoolRuntime[]
  /**
   * The pod's metrics show a new process, or it answers again after being unreachable:
   * its cache may be empty whatever the index says.
   */
  restarted: (pod: string) => void
  log: Log
  /** Scrapes without an answer in a row that make a pod unreachable (3; refused: at once). */
  downAfterFailures?: number
}

/**
 * The pods' /metrics, read at the shortest period of their pools, handed to every runtime
 * routing to the pod (a draining one too); a new process start time or a counter that went
 * down restarts the pod's feed. A pod that does not answer (connection refused, or no
 * answer several times in a row) is out of every runtime's routing and its index entries
 * are dropped until it answers again; each outage is logged once, when it starts and ends.
 */
export class PoolMetricsScraper {
  private readonly options: PoolMetricsScraperOptions
  private scraper: { stop(): void } | null = null
  private intervalMs = 0
  private readonly lastQueries = new Map<string, number>()
  private readonly lastStart = new Map<string, number>()
  /** Scrapes in a row without an answer, per pod. */
  private readonly misses = new Map<string, number>()
  private readonly down = new Set<string>()
  /** Pods answering something that is not metrics (logged once per streak). */
  private readonly unreadable = new Set<string>()

  constructor(options: PoolMetricsScraperOptions) {
    this.options = options
  }

  /** Starts, or restarts when the pools' shortest period changed; forgets pods gone. */
  follow(): void {
    const runtimes = this.options.runtimes()
    const pods = new Set(runtimes.flatMap((runtime) => runtime.endpoints().map((pod) => pod.name)))
    for (const seen of [this.lastQueries, this.lastStart, this.misses])
      for (const pod of seen.keys()) if (!pods.has(pod)) seen.delete(pod)
    for (const seen of [this.down, this.unreadable])
      for (const pod of seen) if (!pods.has(pod)) seen.delete(pod)
    const intervalMs = Math.min(...runtimes.map((runtime) => runtime.spec.metrics.intervalMs))
    if (!Number.isFinite(intervalMs) || (this.scraper && intervalMs === this.intervalMs)) return
    this.scraper?.stop()
    this.intervalMs = intervalMs
    this.scraper = startMetricsScraper({
      intervalMs,
      timeoutMs: 1_000,
      targets: () => this.targets(),
      onSignals: (pod, signals, startedAt) => this.onSignals(pod, signals, startedAt),
      onFailure: (pod, failure) => this.onFailure(pod, failure),
    })
  }

  stop(): void {
    this.scraper?.stop()
    this.scraper = null
  }

  /**
   * One target per pod, as the first runtime listing it (the current one) reads it; an
   * engine of a data-parallel pod reads its own series (engine = its rank).
   */
  private targets(): ScrapeTarget[] {
    const targets = new Map<string, ScrapeTarget>()
    for (const runtime of this.options.runtimes()) {
      for (const pod of runtime.endpoints()) {
        if (targets.has(pod.name)) continue
        targets.set(pod.name, {
          pod: pod.name,
          model: runtime.spec.models[0]?.name ?? '',
          url: runtime.metricsUrl(pod),
          engine: pod.dataParallelRank === null ? null : String(pod.dataParallelRank),
        })
      }
    }
    return [...targets.values()]
  }

  private onSignals(pod: string, signals: VllmLoadSignals, startedAt: number | null): void {
    const now = performance.now()
    const cameBack = this.answered(pod, now)
    this.unreadable.delete(pod)
    const capacity =
      signals.numGpuBlocks !== null && signals.blockSize !== null
        ? signals.numGpuBlocks * signals.blockSize
        : null
    const load = {
      running: signals.running ?? 0,
      waiting: signals.waiting ?? 0,
      kvCacheUsage: signals.kvCacheUsage ?? 0,
    }
    for (const runtime of this.options.runtimes())
      if (runtime.endpoint(pod)) runtime.router.updateMetrics(pod, load, now, capacity)
    const queries = signals.prefixCacheQueries
    const before = this.lastQueries.get(pod)
    const startedBefore = this.lastStart.get(pod)
    if (queries !== null) this.lastQueries.set(pod, queries)
    if (startedAt !== null) this.lastStart.set(pod, startedAt)
    const newProcess =
      startedAt !== null && startedBefore !== undefined && startedAt !== startedBefore
    const counterReset = queries !== null && before !== undefined && queries < before
    if (cameBack || newProcess || counterReset) this.options.restarted(pod)
  }

  private onFailure(pod: string, failure: ScrapeFailure): void {
    if (failure.kind === 'bad-answer') {
      // It answers, so it is up; only its load signals are missing (they go stale).
      if (this.answered(pod, performance.now())) this.options.restarted(pod)
      if (!this.unreadable.has(pod))
        this.options.log(`metrics of ${pod}: ${failure.reason}`, { level: 'warn', pod })
      this.unreadable.add(pod)
      return
    }
    const misses = (this.misses.get(pod) ?? 0) + 1
    this.misses.set(pod, misses)
    if (failure.kind !== 'refused' && misses < (this.options.downAfterFailures ?? 3)) return
    // Every time, not only the first: a runtime created during the outage hears it too.
    this.setReachable(pod, false, performance.now())
    if (this.down.has(pod)) return
    this.down.add(pod)
    this.options.log(
      `${pod} does not answer (${failure.reason}, ${misses} in a row): out of routing, its index entries dropped, until it answers again`,
      { level: 'warn', pod },
    )
    // Its process, and its cache with it, are presumed gone.
    for (const runtime of this.options.runtimes()) void runtime.podUnreachable(pod)
  }

  /** The pod answered: true when it had been unreachable until now. */
  private answered(pod: string, nowMs: number): boolean {
    this.misses.delete(pod)
    if (!this.down.delete(pod)) return false
    this.setReachable(pod, true, nowMs)
    this.options.log(`${pod} answers again: back in routing, its KV events replayed`, { pod })
    return true
  }

  private setReachable(pod: string, reachable: boolean, nowMs: number): void {
    for (const runtime of this.options.runtimes())
      if (runtime.endpoint(pod)) runtime.router.setReachable(pod, reachable, nowMs)
  }
}
