import type { KvEventPublisher } from '../../kv-events/create-kv-event-publisher.ts'
import type { EngineKvEvent } from './engine/block-pool.ts'
import { type EngineRequestInput, type StepResult, VllmEngine } from './engine/vllm-engine.ts'
import type { VllmEngineMetrics } from './metrics/create-vllm-metrics.ts'
import { RealTimeDriver, type RequestListener } from './real-time-driver.ts'
import { prefixCachingEnabled, type SimFaults, type SimPodConfig } from './sim-pod-config.ts'
import { wireEventMapper } from './to-wire-event.ts'

interface Tracker {
  arrivalMs: number
  promptTokens: number
  maxTokens: number
  startMs?: number
  firstTokenMs?: number
  lastTokenMs?: number
  generated: number
}

/** A request for an engine: its input, less the arrival the driver stamps, and its max_tokens. */
export type RankRequest = Omit<EngineRequestInput, 'arrivalMs'> & { maxTokens: number }

/** What vLLM's load balancer reads of an engine (DPLBAsyncMPClient.lb_engines). */
export interface RankLoad {
  waiting: number
  running: number
  kvCacheUsage: number
  /** Requests sent to it and not finished. */
  inflight: number
}

/**
 * One data-parallel rank of a simulated pod, as one vLLM EngineCore: its engine (cache,
 * scheduler), real-time driver, KV-event publisher and its series of the pod's metrics.
 */
export interface EngineRank {
  readonly rank: number
  readonly engine: VllmEngine
  readonly driver: RealTimeDriver
  readonly publisher: KvEventPublisher
  load(): RankLoad
  /** Queues a request; returns its arrival in modelled ms. */
  submit(request: RankRequest, listener: RequestListener): number
  abort(id: string): void
  resetPrefixCache(): boolean
  close(): Promise<void>
}

export interface EngineRankOptions {
  config: SimPodConfig
  rank: number
  faults: () => SimFaults
  random: () => number
  publisher: KvEventPublisher
  metrics: VllmEngineMetrics
  /** LoRA name → vLLM's int id, one map for every rank of the pod so that they agree. */
  loraIds: Map<string, number>
  /** A request of this rank finished or was aborted. */
  onDone: (id: string) => void
}

export function createEngineRank(options: EngineRankOptions): EngineRank {
  const { config, faults, random, publisher, metrics } = options
  const engine = new VllmEngine({
    profile: config.profile,
    random,
    kvEvents: config.kvEvents,
    loraIds: options.loraIds,
  })
  const toWire = wireEventMapper(config.kvEvents)
  const trackers = new Map<string, Tracker>()
  let seen = { queries: 0, hits: 0, externalQueries: 0, externalHits: 0, preemptions: 0 }

  // A pooling pod runs without prefix caching unless told, as vLLM's default for most
  // embedding models (docs/vllm-wire.md, "Embeddings"): no KV events and no cache lookups
  // counted. With it, its inputs take the generate pod's path: same hashes, same events.
  const caching = prefixCachingEnabled(config)
  const delayed = new Set<NodeJS.Timeout>()
  const publish = (events: EngineKvEvent[]) => {
    if (!caching) return
    const wire = events.map(toWire)
    const { dropEventRate, eventDelayMs } = faults()
    const send = !(dropEventRate > 0 && random() < dropEventRate)
    if (eventDelayMs <= 0) {
      publisher.publish(wire, Date.now() / 1000, { send })
      return
    }
    const timer = setTimeout(() => {
      delayed.delete(timer)
      publisher.publish(wire, Date.now() / 1000, { send })
    }, eventDelayMs)
    delayed.add(timer)
  }

  const account = (step: StepResult, endMs: number) => {
    const ttfts: number[] = []
    const itls: number[] = []
    let promptTokens = 0
    for (const started of step.started) {
      const tracker = trackers.get(started.requestId)
      if (tracker) tracker.startMs = step.startMs
    }
    for (const output of step.outputs) {
      const tracker = trackers.get(output.requestId)
      if (!tracker) continue
      if (output.index === 0) {
        ttfts.push((endMs - tracker.arrivalMs) / 1000)
        tracker.firstTokenMs = endMs
        promptTokens += tracker.promptTokens
      } else {
        itls.push((endMs - (tracker.lastTokenMs ?? endMs)) / 1000)
      }
      tracker.lastTokenMs = endMs
      if (!output.pooled) tracker.generated++
      if (output.finished) finish(output.requestId, tracker, output.finished, endMs)
    }
    metrics.recordStep({
      promptTokens,
      generationTokens: step.outputs.filter((output) => !output.pooled).length,
      timesToFirstToken: ttfts,
      interTokenLatencies: itls,
    })
    const stats = engine.stats
    if (caching)
      metrics.addPrefixCache({
        queries: stats.prefixCacheQueries - seen.queries,
        hits: stats.prefixCacheHits - seen.hits,
      })
    // The CPU tier's share, as vLLM's scheduler records connector_prefix_cache_stats.
    metrics.addExternalPrefixCache({
      queries: stats.externalPrefixCacheQueries - seen.externalQueries,
      hits: stats.externalPrefixCacheHits - seen.externalHits,
    })
    metrics.addPreemptions(stats.preemptions - seen.preemptions)
    seen = {
      queries: stats.prefixCacheQueries,
      hits: stats.prefixCacheHits,
      externalQueries: stats.externalPrefixCacheQueries,
      externalHits: stats.externalPrefixCacheHits,
      preemptions: stats.preemptions,
    }
    metrics.setState({
      running: stats.running,
      waiting: stats.waiting,
      kvCacheUsage: stats.kvCacheUsage,
    })
  }

  const finish = (
    id: string,
    tracker: Tracker,
    reason: 'stop' | 'length' | 'abort',
    endMs: number,
  ) => {
    trackers.delete(id)
    options.onDone(id)
    const start = tracker.startMs ?? endMs
    const first = tracker.firstTokenMs ?? endMs
    metrics.recordRequestFinished({
      finishedReason: reason,
      promptTokens: tracker.promptTokens,
      generationTokens: tracker.generated,
      maxTokens: tracker.maxTokens,
      e2eLatency: (endMs - tracker.arrivalMs) / 1000,
      queueTime: (start - tracker.arrivalMs) / 1000,
      prefillTime: (first - start) / 1000,
      decodeTime: (endMs - first) / 1000,
      inferenceTime: (endMs - start) / 1000,
    })
  }

  const driver = new RealTimeDriver(engine, config.timeScale, {
    onEvents: publish,
    onStep: account,
  })
  if (faults().paused) driver.setPaused(true)

  return {
    rank: options.rank,
    engine,
    driver,
    publisher,
    load() {
      const { waiting, running, kvCacheUsage } = engine.stats
      return { waiting, running, kvCacheUsage, inflight: trackers.size }
    },
    submit({ maxTokens, ...input }, listener) {
      const arrivalMs = driver.submit(input, listener)
      trackers.set(input.id, {
        arrivalMs,
        promptTokens: input.promptTokenIds.length,
        maxTokens,
        generated: 0,
      })
      return arrivalMs
    },
    abort(id) {
      const tracker = trackers.get(id)
      driver.abort(id)
      if (tracker) finish(id, tracker, 'abort', driver.virtualNow())
    },
    resetPrefixCache() {
      const reset = engine.resetPrefixCache()
      const events = engine.takeEvents()
      if (events.length > 0) publish(events)
      return reset
    },
    async close() {
      await driver.stop()
      // A dead process sends nothing more, delayed batches included.
      for (const timer of delayed) clearTimeout(timer)
      await publisher.close()
    },
  }
}
