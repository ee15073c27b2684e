import type { TierBlocks } from '../kv-index/tier-lookup.ts'
import { DecodingBatch } from './decoding-batch.ts'
import { FeedLossTracker } from './feed-loss-tracker.ts'
import { IndexTrustTracker } from './index-trust.ts'
import { type DecodeObservation, decodeObservation } from './online-step-cost.ts'
import { memoryOutlook } from './pod-memory.ts'
import type { RoutedRequest } from './routed-request.ts'
import type {
  IndexTrust,
  PodCandidate,
  PodLoad,
  PodMemory,
  PodMetricsView,
  RestoredPodView,
  StepCost,
  TtftModel,
} from './routing-strategy.ts'

/** How every pod of a pool is judged (see routerSettings). */
export interface RoutedPodSettings {
  driftTolerance: number
  /** Scraped metrics older than this are ignored. */
  metricsStalenessMs: number
  /** How long a pod that failed a request is left out. */
  unhealthyCooldownMs: number
  /** KV-cache tokens per pod until its metrics say (pool spec or GPU profile); null: unknown. */
  kvCapacityTokens: number | null
  /** Decode step time before any request is seen decoding (GPU profile). */
  stepCost: StepCost
  /**
   * How long a routed request's blocks count as cached on a pod whose feed is not shown
   * complete (see RoutedPod.speculativeTtlMs); absent or null: the pool's TTL always.
   */
  lossySpeculativeTtlMs?: number | null
}

/** A pod as the admin API, the replica's published view and the inspector show it. */
export interface PodReport {
  name: string
  healthy: boolean
  indexReady: boolean
  trust: IndexTrust
  drift: number
  driftObservations: number
  load: PodLoad
  metrics: PodMetricsView | null
  /** The pool's fitted TTFT model (one per pool). */
  ttft: TtftModel & { observations: number }
  /** The pool's fitted decode step (one per pool, OnlineStepCost). */
  stepCost: StepCost & { observations: number }
}

/** The pod's last scraped metrics, and what this replica had sent there when they came. */
type MetricsReading = Omit<PodMetricsView, 'ageMs' | 'unseenWaiting' | 'foreignRequests'> & {
  atMs: number
  /** This replica's pending requests when the metrics arrived. */
  pendingThen: number
  /** This replica's requests in flight there when the metrics arrived. */
  inFlightThen: number
}

/**
 * One pod as this router replica sees it: the load of what it sent there, the pod's
 * scraped metrics, how far its index is believed, its health, and its KV memory.
 */
export class RoutedPod {
  readonly name: string
  readonly weight: number
  private readonly settings: RoutedPodSettings
  private kvCapacityTokens: number | null
  private readonly load: PodLoad = {
    inFlight: 0,
    pendingRequests: 0,
    pendingPrefillTokens: 0,
    activeTokens: 0,
  }
  private metrics: MetricsReading | null = null
  /** Requests in flight on the pod (for its memory outlook). */
  private readonly requests = new Set<RoutedRequest>()
  /** KV tokens written (+) and freed (−) by those requests since the pod's last metrics. */
  private tokensSinceMetrics = 0
  private readonly trust: IndexTrustTracker
  /** Whether the pod's KV events arrive late or lost, from its answers. */
  private feed = new FeedLossTracker()
  private indexReady = false
  private unhealthyUntilMs = 0
  /** False while the pod does not answer at all (its metrics unreachable): out until it does. */
  private reachable = true
  /** The pool's decode step now (its router's fit), for the memory outlook. */
  private readonly stepCost: () => StepCost
  /** What its decode steps read, over time (a request's mean batch context for the fit). */
  private readonly batch = new DecodingBatch()

  constructor(name: string, weight: number, settings: RoutedPodSettings, stepCost: () => StepCost) {
    this.name = name
    this.weight = weight
    this.settings = settings
    this.stepCost = stepCost
    this.kvCapacityTokens = settings.kvCapacityTokens
    this.trust = new IndexTrustTracker({ tolerance: settings.driftTolerance })
  }

  /** The pod's scraped metrics; `kvCapacityTokens` from vllm:cache_config_info when known. */
  updateMetrics(
    view: Omit<PodMetricsView, 'ageMs'>,
    nowMs: number,
    kvCapacityTokens: number | null,
  ): void {
    this.metrics = {
      running: view.running,
      waiting: view.waiting,
      kvCacheUsage: view.kvCacheUsage,
      atMs: nowMs,
      pendingThen: this.load.pendingRequests,
      inFlightThen: this.load.inFlight,
    }
    this.tokensSinceMetrics = 0
    if (kvCapacityTokens !== null && kvCapacityTokens > 0) this.kvCapacityTokens = kvCapacityTokens
  }

  /** false while the pod's index cannot be believed (gap awaiting replay, new incarnation). */
  setIndexReady(ready: boolean): void {
    if (ready && !this.indexReady) {
      this.trust.reset()
      this.feed = new FeedLossTracker()
    }
    this.indexReady = ready
  }

  /** A replica's reported trust and health of the pod, read back. */
  restore(view: RestoredPodView, nowMs: number): void {
    this.trust.restore(view)
    if (!view.healthy) this.markUnhealthy(nowMs)
  }

  markUnhealthy(nowMs: number): void {
    this.unhealthyUntilMs = nowMs + this.settings.unhealthyCooldownMs
  }

  /**
   * An unreachable pod is unhealthy until it answers again, however long that takes; once
   * it does, the failures of its requests meanwhile (the outage's) no longer count.
   */
  setReachable(reachable: boolean): void {
    if (this.reachable === reachable) return
    this.reachable = reachable
    if (reachable) this.unhealthyUntilMs = 0
  }

  healthy(nowMs: number): boolean {
    return this.reachable && this.unhealthyUntilMs <= nowMs
  }

  /** The pod reported the cached tokens of a request that ended there (index drift). */
  private observeCachedTokens(request: RoutedRequest, reportedCachedTokens: number): void {
    this.trust.observe(request.indexedCachedTokens, reportedCachedTokens, request.promptTokens)
    this.feed.observe(reportedCachedTokens > request.indexedCachedTokens)
  }

  /**
   * How long blocks sent here count as cached before the pod's events confirm them: the
   * pool's `baseMs` once its answers have shown the index complete, the lossy TTL while
   * its feed is held lossy (FeedLossTracker). Long entries keep a lost batch (which
   * nothing replays) from leaving a hole in a prefix's chain that makes the pod holding it
   * look cold, as long as the prefix's requests keep refreshing them; an eviction they
   * hide shows as drift (reported below predicted) and demotes the pod.
   */
  speculativeTtlMs(baseMs: number): number {
    const lossyMs = this.settings.lossySpeculativeTtlMs
    // A pool that sets its TTL to 0 asked for no speculative entries at all.
    if (lossyMs == null || baseMs === 0 || !this.feed.lossy()) return baseMs
    return Math.max(baseMs, lossyMs)
  }

  /**
   * The pod as the strategy sees it for a request of which it holds `indexed` blocks (index)
   * and `tiers` more per medium past them (tier lookup), both discounted by trust.
   */
  candidate(indexed: number, nowMs: number, ttft: TtftModel, tiers?: TierBlocks): PodCandidate {
    const trusted = this.indexReady ? Math.floor(indexed * this.trust.confidence) : 0
    const tierBlocks = tiers && this.indexReady ? this.trustedTiers(tiers) : null
    return {
      name: this.name,
      cachedBlocks: trusted,
      ...(tierBlocks && { tierBlocks }),
      trust: this.indexReady ? this.trust.trust : 'load-only',
      load: { ...this.load },
      metrics: this.metricsView(nowMs),
      ttft,
      memory: this.memory(nowMs),
      weight: this.weight,
    }
  }

  private trustedTiers(tiers: TierBlocks): TierBlocks | null {
    const trusted = Object.entries(tiers)
      .map(([medium, blocks]) => [medium, Math.floor(blocks * this.trust.confidence)] as const)
      .filter(([, blocks]) => blocks > 0)
    return trusted.length > 0 ? Object.fromEntries(trusted) : null
  }

  report(
    nowMs: number,
    ttft: TtftModel & { observations: number },
    stepCost: StepCost & { observations: number },
  ): PodReport {
    return {
      name: this.name,
      healthy: this.healthy(nowMs),
      indexReady: this.indexReady,
      trust: this.trust.trust,
      drift: this.trust.drift,
      driftObservations: this.trust.observations,
      load: { ...this.load },
      metrics: this.metricsView(nowMs),
      ttft,
      stepCost,
    }
  }

  /** The decoding batch's context integral to `nowMs` (DecodingBatch.integral). */
  contextIntegral(nowMs: number): number {
    return this.batch.integral(nowMs)
  }

  /** Sent here: queued prefill until its first token, load until its end. */
  started(request: RoutedRequest): void {
    this.requests.add(request)
    this.tokensSinceMetrics += request.uncachedTokens + request.loadedTokens
    this.load.inFlight++
    this.load.pendingRequests++
    this.load.pendingPrefillTokens += request.uncachedTokens
    this.load.activeTokens += request.promptTokens
  }

  /** Its first token went by at `nowMs`: its prefill left the queue, its decode starts. */
  firstToken(request: RoutedRequest, nowMs: number): void {
    request.firstTokenAtMs = nowMs
    request.contextIntegralAtFirstToken = this.batch.integral(nowMs)
    this.batch.add(request.promptTokens + request.generated)
    this.answered(request)
  }

  /** Its prefill left the queue (first token, or its end without one). */
  private answered(request: RoutedRequest): void {
    this.load.pendingRequests--
    this.load.pendingPrefillTokens -= request.uncachedTokens
  }

  /**
   * It generated `tokens` more (its KV footprint grows with them), by `nowMs` when known;
   * unknown, the growth counts from the pod's last reading.
   */
  progressed(tokens: number, nowMs: number | undefined, decoding: boolean): void {
    if (decoding) this.batch.add(tokens, nowMs)
    this.load.activeTokens += tokens
    this.tokensSinceMetrics += tokens
  }

  /**
   * The request finished at `nowMs` (before it ends): the pod's reported cached tokens
   * (null: unknown) are observed, and its decode is returned (decodeObservation) when this
   * replica saw the pod's whole batch, as for the TTFT fit (RoutedRequest.sawWholeQueue):
   * another replica's requests there add context the integral does not hold.
   */
  finished(
    request: RoutedRequest,
    nowMs: number,
    reportedCachedTokens: number | null,
  ): DecodeObservation | null {
    if (reportedCachedTokens !== null) this.observeCachedTokens(request, reportedCachedTokens)
    if (!request.sawWholeQueue) return null
    return decodeObservation(request, nowMs, this.batch.integral(nowMs))
  }

  /** It ended or failed at `nowMs`: nothing of it is on the pod any more. */
  ended(request: RoutedRequest, nowMs: number): void {
    this.requests.delete(request)
    this.tokensSinceMetrics -= request.uncachedTokens + request.loadedTokens + request.generated
    this.load.inFlight--
    if (request.firstTokenAtMs === null) this.answered(request)
    else this.batch.add(-(request.promptTokens + request.generated), nowMs)
    this.load.activeTokens -= request.promptTokens + request.generated
  }

  private metricsView(nowMs: number): PodMetricsView | null {
    if (!this.metrics) return null
    const ageMs = nowMs - this.metrics.atMs
    if (ageMs > this.settings.metricsStalenessMs) return null
    const { running, waiting, kvCacheUsage, pendingThen, inFlightThen } = this.metrics
    return {
      running,
      waiting,
      kvCacheUsage,
      ageMs,
      unseenWaiting: Math.max(0, waiting - pendingThen),
      foreignRequests: Math.max(0, running + waiting - inFlightThen),
    }
  }

  /** The pod's memory as this replica sees it (memoryOutlook); null: capacity unknown. */
  private memory(nowMs: number): PodMemory | null {
    if (this.kvCapacityTokens === null) return null
    const metrics = this.metricsView(nowMs)
    return memoryOutlook({
      capacityTokens: this.kvCapacityTokens,
      reported: metrics ? { usage: metrics.kvCacheUsage, since: this.tokensSinceMetrics } : null,
      requests: this.requests,
      load: this.load,
      decodingTokens: this.batch.tokens,
      stepCost: this.stepCost(),
    })
  }
}
