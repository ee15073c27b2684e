import {
  extractVllmLoadSignals,
  type VllmLoadSignals,
} from '../../metrics/extract-vllm-load-signals.ts'
import { parsePrometheusText } from '../../metrics/parse-prometheus-text.ts'

export interface ScrapeTarget {
  pod: string
  model: string
  url: string
  /**
   * The `engine` label of the pod's series to read: an engine of a data-parallel pod, whose
   * /metrics it shares with the pod's other engines. Null: every engine of the URL.
   */
  engine: string | null
}

/**
 * Why a scrape failed: nothing listens at the address (`refused`), no answer came (reset,
 * timeout, unreachable), or the pod answered something that is not its metrics.
 */
export interface ScrapeFailure {
  kind: 'refused' | 'no-answer' | 'bad-answer'
  reason: string
}

export interface MetricsScraperOptions {
  targets: () => readonly ScrapeTarget[]
  intervalMs: number
  timeoutMs: number
  /** `startedAt`: process_start_time_seconds when the pod exposes it (a change = a restart). */
  onSignals: (pod: string, signals: VllmLoadSignals, startedAt: number | null) => void
  onFailure: (pod: string, failure: ScrapeFailure) => void
}

/**
 * Reads every pod's /metrics on a fixed period, at most one scrape in flight per URL, and
 * hands the load signals on. These correct the router's own accounting for traffic that
 * did not pass through this replica; a failed scrape leaves the last reading to go stale.
 * The engines of a data-parallel pod share one /metrics: it is read once per round and
 * each engine's target gets its own series (the `engine` label), or the failure.
 */
export function startMetricsScraper(options: MetricsScraperOptions): { stop(): void } {
  const inFlight = new Set<string>()
  const scrape = async (url: string, targets: readonly ScrapeTarget[]) => {
    if (inFlight.has(url)) return
    inFlight.add(url)
    const fail = (failure: ScrapeFailure) => {
      for (const target of targets) options.onFailure(target.pod, failure)
    }
    try {
      const text = await fetchText(url, options.timeoutMs)
      if (typeof text !== 'string') return fail(text)
      const { samples } = parsePrometheusText(text)
      const start = samples.find((sample) => sample.name === 'process_start_time_seconds')
      for (const target of targets) {
        const engine = target.engine === null ? {} : { engine: target.engine }
        const signals = extractVllmLoadSignals(samples, target.model, engine)
        options.onSignals(target.pod, signals, start?.value ?? null)
      }
    } catch (error) {
      fail({ kind: 'bad-answer', reason: (error as Error).message })
    } finally {
      inFlight.delete(url)
    }
  }
  const round = () => {
    const byUrl = new Map<string, ScrapeTarget[]>()
    for (const target of options.targets()) {
      const same = byUrl.get(target.url)
      if (same) same.push(target)
      else byUrl.set(target.url, [target])
    }
    for (const [url, targets] of byUrl) void scrape(url, targets)
  }
  // A first round at once: every pod gets a baseline (load, process start) before traffic.
  round()
  const timer = setInterval(round, options.intervalMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}

/** The body of a 200, or why there is none. */
async function fetchText(url: string, timeoutMs: number): Promise<string | ScrapeFailure> {
  let response: Response
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
  } catch (error) {
    return noAnswer(error)
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {})
    return { kind: 'bad-answer', reason: `HTTP ${response.status}` }
  }
  try {
    return await response.text()
  } catch (error) {
    return noAnswer(error)
  }
}

function noAnswer(error: unknown): ScrapeFailure {
  // fetch says "fetch failed" and puts the socket's error code in its cause.
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
  const message = (error as Error).message
  const reason = typeof cause?.message === 'string' ? `${message}: ${cause.message}` : message
  return { kind: cause?.code === 'ECONNREFUSED' ? 'refused' : 'no-answer', reason }
}
