import { Agent } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../shared/kv-index/memory-kv-index.ts'
import { bindKvEventSubscriber } from '../kv-events/create-kv-event-subscriber.ts'
import { createRedisKvIndex } from '../kv-index/redis-kv-index.ts'
import type { InferenceContext } from './inference-context.ts'
import { startMetricsScraper } from './metrics-scraper.ts'
import { PolicyBundleCache } from './policy-bundle-cache.ts'
import { createTokenizerCache, PoolRuntime } from './pool-runtime.ts'
import type { ScorerConfig, ScorerPod } from './scorer-config.ts'
import { createScorerMetrics } from './scorer-metrics.ts'
import { createScorerServer } from './scorer-server.ts'

export interface RunningScorer {
  readonly url: string
  /** The bound SUB socket pods connect to, when eventsBind is set. */
  readonly eventsEndpoint: string | null
  readonly pools: readonly PoolRuntime[]
  readonly index: KvIndex
  addPod(pod: ScorerPod): Promise<void>
  removePod(name: string): Promise<void>
  close(): Promise<void>
}

/**
 * Starts the scorer: the index (Redis when configured, else in memory), one runtime per
 * pool with its pods, the metrics scraper, and the HTTP server.
 */
export async function startScorer(
  config: ScorerConfig,
  log: (message: string) => void,
): Promise<RunningScorer> {
  const index = config.redisUrl
    ? await createRedisKvIndex({ redis: config.redisUrl, prefix: config.redisPrefix })
    : createMemoryKvIndex()
  const tokenizers = createTokenizerCache()
  const metrics = createScorerMetrics(() => Date.now() / 1000)
  const pools = config.pools.map(
    (pool) =>
      new PoolRuntime({
        name: pool.name,
        spec: pool.spec,
        index,
        tokenizers,
        onError: log,
        sharedEvents: config.eventsBind !== null,
        random: Math.random,
        onHoldEnd: (heldMs, outcome) =>
          metrics.holdSeconds.labels({ pool: pool.name, outcome }).observe(heldMs / 1000),
        counters: metrics,
      }),
  )
  const shared = config.eventsBind
    ? await bindKvEventSubscriber({
        endpoint: config.eventsBind,
        onBatch: (topic, seq, batch) => {
          for (const pool of pools) {
            const pod = pool.podOfTopic(topic)
            if (pod !== null && pool.deliver(pod, seq, batch)) return
          }
          log(`KV events on topic ${topic} name no known pod; dropped`)
        },
        onError: (error) => log(error.message),
      })
    : null
  const poolOf = (name: string) => {
    const pool = pools.find((p) => p.name === name)
    if (!pool) throw new Error(`pod refers to unknown pool "${name}"`)
    return pool
  }
  const context: InferenceContext = {
    config,
    pools,
    index,
    metrics,
    agent: new Agent({ keepAlive: true, maxSockets: 1024 }),
    podsReportingCache: new Set(),
    random: Math.random,
    log,
    bundles: new PolicyBundleCache(),
  }
  // Warm the tokenizers now rather than on the first request.
  for (const pool of pools) for (const model of pool.spec.models) pool.serves(model.name)
  for (const pod of config.pods) await poolOf(pod.pool).addPod(pod)

  const lastQueries = new Map<string, number>()
  const lastStart = new Map<string, number>()
  const scraper = startMetricsScraper({
    intervalMs: Math.min(...pools.map((pool) => pool.spec.metrics.intervalMs)),
    timeoutMs: 1_000,
    targets: () =>
      pools.flatMap((pool) =>
        pool.endpoints().map((pod) => ({
          pod: pod.name,
          model: pool.spec.models[0]?.name ?? '',
          url: new URL(pool.spec.metrics.path, pod.http).toString(),
        })),
      ),
    onSignals: (pod, signals, startedAt) => {
      const pool = pools.find((p) => p.endpoint(pod))
      if (!pool) return
      pool.router.updateMetrics(
        pod,
        {
          running: signals.running ?? 0,
          waiting: signals.waiting ?? 0,
          kvCacheUsage: signals.kvCacheUsage ?? 0,
        },
        performance.now(),
        signals.numGpuBlocks !== null && signals.blockSize !== null
          ? signals.numGpuBlocks * signals.blockSize
          : null,
      )
      // A new process start time, or a counter that went down, means a new process: its
      // cache is empty whatever the index says.
      const queries = signals.prefixCacheQueries
      const before = lastQueries.get(pod)
      const startedBefore = lastStart.get(pod)
      if (queries !== null) lastQueries.set(pod, queries)
      if (startedAt !== null) lastStart.set(pod, startedAt)
      const newProcess =
        startedAt !== null && startedBefore !== undefined && startedAt !== startedBefore
      const counterReset = queries !== null && before !== undefined && queries < before
      if (newProcess || counterReset) void pool.restartDetected(pod)
    },
    onFailure: (pod, reason) => log(`metrics of ${pod}: ${reason}`),
  })

  const refreshMetrics = () => {
    const now = performance.now()
    for (const pool of pools) {
      metrics.heldRequests.labels({ pool: pool.name }).set(pool.admission.held)
      for (const report of pool.router.podReports(now)) {
        metrics.drift.labels({ pod: report.name }).set(report.drift)
        for (const state of ['precise', 'approximate', 'load-only']) {
          metrics.trust.labels({ pod: report.name, state }).set(report.trust === state ? 1 : 0)
        }
      }
    }
  }
  const server = createScorerServer(context, refreshMetrics)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${config.host}:${port}`,
    eventsEndpoint: shared?.endpoint ?? null,
    pools,
    index,
    addPod: (pod) => poolOf(pod.pool).addPod(pod),
    removePod: async (name) => {
      for (const pool of pools) if (pool.endpoint(name)) await pool.removePod(name)
    },
    async close() {
      scraper.stop()
      // Requests held by late binding get an error answer before connections are cut.
      await Promise.all(pools.map((pool) => pool.admission.close()))
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      for (const pool of pools) await pool.close()
      await shared?.close()
      context.agent.destroy()
      await index.close()
    },
  }
}
