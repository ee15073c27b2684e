import type { VllmLoadSignals } from '../metrics/extract-vllm-load-signals.ts'
import { type ScrapeTarget, startMetricsScraper } from './metrics-scraper.ts'
import type { PoolRuntime } from './pool-runtime.ts'

export interface PoolMetricsScraperOptions {
  /** Every runtime routing to pods now, current ones first. */
  runtimes: () => readonly PoolRuntime[]
  /** The pod's metrics show a new process: its cache is empty whatever the index says. */
  restarted: (pod: string) => void
  log: (message: string) => void
}

/**
 * The pods' /metrics, read at the shortest period of their pools, handed to every runtime
 * routing to the pod (a draining one too); a new process start time or a counter that went
 * down restarts the pod's feed.
 */
export class PoolMetricsScraper {
  private readonly options: PoolMetricsScraperOptions
  private scraper: { stop(): void } | null = null
  private intervalMs = 0
  private readonly lastQueries = new Map<string, number>()
  private readonly lastStart = new Map<string, number>()

  constructor(options: PoolMetricsScraperOptions) {
    this.options = options
  }

  /** Starts, or restarts when the pools' shortest period changed; forgets pods gone. */
  follow(): void {
    const runtimes = this.options.runtimes()
    const pods = new Set(runtimes.flatMap((runtime) => runtime.endpoints().map((pod) => pod.name)))
    for (const seen of [this.lastQueries, this.lastStart])
      for (const pod of seen.keys()) if (!pods.has(pod)) seen.delete(pod)
    const intervalMs = Math.min(...runtimes.map((runtime) => runtime.spec.metrics.intervalMs))
    if (!Number.isFinite(intervalMs) || (this.scraper && intervalMs === this.intervalMs)) return
    this.scraper?.stop()
    this.intervalMs = intervalMs
    this.scraper = startMetricsScraper({
      intervalMs,
      timeoutMs: 1_000,
      targets: () => this.targets(),
      onSignals: (pod, signals, startedAt) => this.onSignals(pod, signals, startedAt),
      onFailure: (pod, reason) => this.options.log(`metrics of ${pod}: ${reason}`),
    })
  }

  stop(): void {
    this.scraper?.stop()
    this.scraper = null
  }

  /** One target per pod, as the first runtime listing it (the current one) reads it. */
  private targets(): ScrapeTarget[] {
    const targets = new Map<string, ScrapeTarget>()
    for (const runtime of this.options.runtimes()) {
      for (const pod of runtime.endpoints()) {
        if (targets.has(pod.name)) continue
        const model = runtime.spec.models[0]?.name ?? ''
        targets.set(pod.name, { pod: pod.name, model, url: runtime.metricsUrl(pod) })
      }
    }
    return [...targets.values()]
  }

  private onSignals(pod: string, signals: VllmLoadSignals, startedAt: number | null): void {
    const now = performance.now()
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
    if (newProcess || counterReset) this.options.restarted(pod)
  }
}
