import { randomBytes } from 'node:crypto'
import { Agent } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hostname } from 'node:os'
import type { Tracer } from '@opentelemetry/api'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import type { TierHoldings } from '../../shared/kv-index/tier-holdings.ts'
import { TierLookup } from '../../shared/kv-index/tier-lookup.ts'
import type { Log } from '../../shared/logging/log.ts'
import { builtinPlugins, type Plugins } from '../../shared/plugins.ts'
import { createMemoryStateStore } from '../../shared/state/memory-state-store.ts'
import type { StateStore } from '../../shared/state/state-store.ts'
import { drainHttpServer, type ServerActivity } from '../http/drain-http-server.ts'
import { bindKvEventSubscriber } from '../kv-events/create-kv-event-subscriber.ts'
import { PodFeeds } from '../kv-feeds/pod-feeds.ts'
import { learnBlockSizes, openScorerIndex, resyncFeeds } from '../kv-index/open-scorer-index.ts'
import { createRedisStateStore } from '../state/redis-state-store.ts'
import { openStatusReader } from '../status-page/open-status-reader.ts'
import { stateStatusSource } from '../status-page/state-status-source.ts'
import { statusPageRoutes } from '../status-page/status-page-routes.ts'
import { startEndpointPicker } from './epp/start-endpoint-picker.ts'
import { ReplayGuard } from './http/replay-guard.ts'
import { createScorerServer, startScorerMetricsListener } from './http/scorer-server.ts'
import { PoolMetricsScraper } from './metrics/pool-metrics-scraper.ts'
import { createScorerMetricsRefresh } from './metrics/refresh-scorer-metrics.ts'
import { createScorerMetrics } from './metrics/scorer-metrics.ts'
import { createStateMetrics } from './metrics/state-metrics.ts'
import { LivePools } from './pools/live-pools.ts'
import { PolicyBundleCache } from './pools/policy-bundle-cache.ts'
import type { PoolRuntime } from './pools/pool-runtime.ts'
import { poolRuntimeFactory } from './pools/pool-runtime-factory.ts'
import { type ApplyReport, ScorerReconciler } from './pools/scorer-reconciler.ts'
import type { ScorerConfig, ScorerPod } from './scorer-config.ts'
import { TokenizerCache } from './serving/tokenizer-cache.ts'
import { createDecisionRecorder } from './state/decision-recorder.ts'
import { startPodStatePublisher } from './state/pod-state-publisher.ts'

export type { ApplyReport } from './pools/scorer-reconciler.ts'

export interface RunningScorer {
  readonly url: string
  /** The metrics listener's base URL (GET /metrics and /health there); null when it is off. */
  readonly metricsUrl: string | null
  /** The bound SUB socket pods connect to, when eventsBind is set. */
  readonly eventsEndpoint: string | null
  /** The Endpoint Picker's gRPC port (config.epp); null when it is off. */
  readonly eppPort: number | null
  /** The pool runtimes new requests go to. */
  readonly pools: readonly PoolRuntime[]
  /** Runtimes a new config replaced, finishing the requests that started on them. */
  readonly draining: readonly PoolRuntime[]
  readonly index: KvIndex
  /** The pods' non-GPU tiers (tier-holdings.ts), beside the index. */
  readonly tiers: TierHoldings
  /**
   * What this replica shares about its pods and decisions (control-plane/state): in Redis
   * with the index, else in memory; read it with createStateReader.
   */
  readonly state: StateStore
  /** This replica's name there. */
  readonly replica: string
  /** Writes the pods' view and the queued decisions now (tests; otherwise on timers). */
  flushState(): Promise<void>
  /** The hash of the snapshot applied last; null when the scorer has none (pools by hand). */
  readonly snapshotHash: string | null
  /**
   * Serves a verified snapshot's pools, backends and endpoints from now on, without a
   * restart; calls are applied one after the other, the same hash twice is a no-op, and
   * a snapshot the scorer cannot serve is refused (the previous config stays).
   */
  applySnapshot(snapshot: ConfigSnapshot): Promise<ApplyReport>
  /** A pod by hand, kept across snapshots while its pool exists; throws for an unknown pool. */
  addPod(pod: ScorerPod): Promise<void>
  /** A pod out of every pool and the index, until a snapshot lists it again. */
  removePod(name: string): Promise<void>
  /**
   * Stops: with a drain, first refuses new connections and answers /health 503 (so
   * readiness fails), waits up to `drainMs` for the requests in flight (streams included)
   * to finish; then answers the ones still held for a pod with an error, cuts what is left
   * and closes everything, the metrics listener last.
   */
  close(options?: { drainMs?: number }): Promise<void>
}

/**
 * Starts the scorer: the index (Redis when configured, else in memory), the pods' feeds,
 * one runtime per pool with its pods (from the config's snapshot, or its pools and pods),
 * the metrics scraper, the HTTP server, and the metrics listener (/metrics, /health).
 * `plugins`: the strategies its pools route with and the conditions the edge's policy
 * bundles are read with; `config` was parsed with their schema (scorerConfigSchema).
 * `tracer`: where each request's spans go (request-trail.ts); none without.
 */
export async function startScorer(
  config: ScorerConfig,
  log: Log,
  plugins: Plugins = builtinPlugins,
  { tracer }: { tracer?: Tracer | undefined } = {},
): Promise<RunningScorer> {
  const metrics = createScorerMetrics(() => Date.now() / 1000)
  const stateMetrics = createStateMetrics(metrics.registry)
  const { index, guard, tiers } = await openScorerIndex(config, stateMetrics, log)
  const state = await openStateStore(config).catch(async (error: unknown) => {
    await index.close()
    await tiers.close()
    throw error
  })
  const replica =
    config.replicaId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`
  const decisions = createDecisionRecorder({
    store: state,
    flushMs: config.decisionFlushMs,
    maxBuffered: 50_000,
    log,
    onDropped: (count) => stateMetrics.decisionsDropped.inc(count),
  })
  // The feeds apply through the tier lookup, so routers find the blocks pods keep in their
  // CPU tiers (tier-lookup.ts); both pass everything on to the index and the holdings.
  const tierLookup = new TierLookup(tiers)
  const feeds = new PodFeeds({
    index: tierLookup.index(index),
    tiers: tierLookup.holdings,
    sharedEvents: config.eventsBind !== null,
    // While the shared index is out every batch fails: the outage is logged once instead.
    onError: (message) => {
      if (guard?.available !== false) log(message, { level: 'warn' })
    },
    onBlockSize: (pod) => learnBlockSizes(live, feeds, pod),
  })
  const live = new LivePools({ pools: [], backends: {} }, log)
  guard?.onRecovered(async () => {
    stateMetrics.indexResyncs.inc()
    await resyncFeeds(live, feeds)
  })
  const scraper = new PoolMetricsScraper({
    runtimes: () => live.all(),
    restarted: (pod) => void feeds.get(pod)?.restart(),
    log,
  })
  const tokenizers = new TokenizerCache({ log })
  const reconciler = new ScorerReconciler({
    live,
    createRuntime: poolRuntimeFactory(
      {
        index,
        tiers: tierLookup,
        feeds,
        metrics,
        tokenizers,
        guard: config.tokenization.guard,
        strategies: plugins.strategies,
      },
      log,
    ),
    drainTimeoutMs: config.drainTimeoutMs,
    log,
    onChange: () => {
      scraper.follow()
      learnBlockSizes(live, feeds)
    },
    retryTokenizers: () => tokenizers.retryFailed(),
  })
  // A tokenizer's files may appear later (a volume mounted late): tried again off the
  // requests' path, as a new snapshot does.
  const tokenizerRetry = setInterval(() => tokenizers.retryFailed(), config.tokenization.retryMs)
  tokenizerRetry.unref()
  const shared = config.eventsBind
    ? await bindKvEventSubscriber({
        endpoint: config.eventsBind,
        onBatch: (topic, seq, batch) => {
          for (const pool of live.all()) {
            const pod = pool.podOfTopic(topic)
            if (pod !== null && feeds.deliver(pod, seq, batch)) return
          }
          log(`KV events on topic ${topic} name no known pod; dropped`, { level: 'warn' })
        },
        onError: (error) => log(error.message, { level: 'warn' }),
      })
    : null
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 })
  const publisher = startPodStatePublisher({
    store: state,
    replica,
    intervalMs: config.stateIntervalMs,
    ttlMs: config.stateTtlMs,
    pools: () => live.current.pools,
    index,
    log,
    onFailure: () => stateMetrics.podViewWriteFailures.inc(),
  })
  const closeAll = async () => {
    clearInterval(tokenizerRetry)
    scraper.stop()
    await publisher.stop()
    await decisions.close()
    await state.close()
    await live.close()
    await shared?.close()
    agent.destroy()
    await index.close()
    await tiers.close()
  }
  try {
    await reconciler.start(config)
  } catch (error) {
    await closeAll()
    throw error
  }
  const context = {
    config,
    index,
    tiers,
    metrics,
    agent,
    podsReportingCache: new Set<string>(),
    random: Math.random,
    log,
    tracer,
    bundles: new PolicyBundleCache(plugins),
    replica,
    decisions,
    replays: new ReplayGuard(),
    requestIds: new WeakMap(),
  }
  const activity: ServerActivity = { inFlight: 0 }
  const refreshMetrics = createScorerMetricsRefresh(metrics)
  const status = await openStatusReader({
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    state,
    applied: () => reconciler.appliedSnapshot,
  }).catch(async (error: unknown) => {
    await closeAll()
    throw error
  })
  const server = createScorerServer(
    context,
    live,
    activity,
    statusPageRoutes({
      adminToken: config.adminToken,
      source: stateStatusSource(status.reader, {
        pollMs: 500,
        nowMs: Date.now,
        quotasKnown: status.quotasKnown,
      }),
    }),
  )
  let draining = false
  const closeStarted = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await status.close()
    await closeAll()
  }
  // The metrics listener starts once the API listens: /health answers ok only then.
  const metricsListener = await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    // Node's default queue of 511 overflows when a thousand edge connections open at once;
    // each dropped SYN waits for its retransmit (1, 3, 7 s …). The kernel caps it at somaxconn.
    server.listen({ port: config.port, host: config.host, backlog: 4_096 }, () => resolve())
  })
    .then(() =>
      startScorerMetricsListener(
        config,
        () => {
          refreshMetrics(live, performance.now())
          return metrics.registry.render()
        },
        () => draining,
      ),
    )
    .catch(async (error: unknown) => {
      await closeStarted()
      throw error
    })
  const epp = config.epp
    ? await startEndpointPicker(config.epp, context, live).catch(async (error: unknown) => {
        await closeStarted()
        await metricsListener?.close()
        throw error
      })
    : null
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${config.host}:${port}`,
    metricsUrl: metricsListener?.url ?? null,
    eventsEndpoint: shared?.endpoint ?? null,
    eppPort: epp?.port ?? null,
    get pools() {
      return live.current.pools
    },
    get draining() {
      return live.draining
    },
    index,
    tiers,
    state,
    replica,
    async flushState() {
      await publisher.publish()
      await decisions.flush()
    },
    get snapshotHash() {
      return reconciler.hash
    },
    applySnapshot: (snapshot) => reconciler.applySnapshot(snapshot),
    addPod: (pod) => reconciler.addPod(pod),
    removePod: (name) => reconciler.removePod(name),
    async close(options = {}) {
      draining = true
      epp?.setServing(false)
      await Promise.all([
        drainHttpServer(server, activity, options.drainMs ?? 0),
        epp?.close(options.drainMs ?? 0),
      ])
      scraper.stop()
      // Requests held by late binding get an error answer before connections are cut.
      await Promise.all(live.all().map((pool) => pool.admission.close()))
      await closeStarted()
      await metricsListener?.close()
    },
  }
}

/** The shared state beside the index: in Redis when the index is, else in memory. */
function openStateStore(config: ScorerConfig): Promise<StateStore> {
  if (!config.redisUrl)
    return Promise.resolve(createMemoryStateStore({ maxDecisions: config.decisionLogLength }))
  return createRedisStateStore({
    redis: config.redisUrl,
    prefix: config.redisPrefix,
    maxDecisions: config.decisionLogLength,
  })
}
