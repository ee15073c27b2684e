import {
  extractVllmLoadSignals,
  type VllmLoadSignals,
} from '../metrics/extract-vllm-load-signals.ts'
import { parsePrometheusText } from '../metrics/parse-prometheus-text.ts'

export interface ScrapeTarget {
  pod: string
  model: string
  url: string
}

export interface MetricsScraperOptions {
  targets: () => readonly ScrapeTarget[]
  intervalMs: number
  timeoutMs: number
  /** `startedAt`: process_start_time_seconds when the pod exposes it (a change = a restart). */
  onSignals: (pod: string, signals: VllmLoadSignals, startedAt: number | null) => void
  onFailure: (pod: string, reason: string) => void
}

/**
 * Reads every pod's /metrics on a fixed period, at most one scrape in flight per pod, and
 * hands the load signals on. These correct the router's own accounting for traffic that
 * did not pass through this replica; a failed scrape leaves the last reading to go stale.
 */
export function startMetricsScraper(options: MetricsScraperOptions): { stop(): void } {
  const inFlight = new Set<string>()
  const scrape = async (target: ScrapeTarget) => {
    if (inFlight.has(target.pod)) return
    inFlight.add(target.pod)
    try {
      const response = await fetch(target.url, { signal: AbortSignal.timeout(options.timeoutMs) })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const { samples } = parsePrometheusText(await response.text())
      const start = samples.find((sample) => sample.name === 'process_start_time_seconds')
      options.onSignals(
        target.pod,
        extractVllmLoadSignals(samples, target.model),
        start?.value ?? null,
      )
    } catch (error) {
      options.onFailure(target.pod, (error as Error).message)
    } finally {
      inFlight.delete(target.pod)
    }
  }
  const round = () => {
    for (const target of options.targets()) void scrape(target)
  }
  // A first round at once: every pod gets a baseline (load, process start) before traffic.
  round()
  const timer = setInterval(round, options.intervalMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
