import { IndexTrustTracker } from './index-trust.ts'
import { admissionWaitMs, memoryOutlook, type PodMemory } from './pod-memory.ts'
import type {
  PodCandidate,
  PodLoad,
  PodMetricsView,
  RestoredPodView,
  RoutingContext,
  RoutingDecision,
  RoutingRequest,
  RoutingStrategy,
  StepCost,
  TtftModel,
} from './routing-strategy.ts'
import {
  cachedTokensOf,
  effectiveWork,
  OnlineTtftModel,
  predictTtftMs,
  ttftFeatures,
} from './ttft-model.ts'

export interface RouterCoreOptions {
  strategy: RoutingStrategy
  stepBudget: number
  /** Initial TTFT model of every pod (from the GPU profile or the pool's overrides). */
  prior: TtftModel
  onlineCalibration: boolean
  forgettingFactor: number
  driftTolerance: number
  /** Scraped metrics older than this are ignored. */
  metricsStalenessMs: number
  /** How long a pod that failed a request is left out. */
  unhealthyCooldownMs: number
  /** KV-cache tokens per pod until its metrics say (pool spec or GPU profile); null: unknown. */
  kvCapacityTokens: number | null
  /** Decode step time, for admission waits (GPU profile). */
  stepCost: StepCost
}

interface PodState {
  name: string
  weight: number
  kvCapacityTokens: number | null
  load: PodLoad
  metrics:
    | (Omit<PodMetricsView, 'ageMs' | 'unseenWaiting' | 'foreignRequests'> & {
        atMs: number
        /** This replica's pending requests when the metrics arrived. */
        pendingThen: number
        /** This replica's requests in flight there when the metrics arrived. */
        inFlightThen: number
      })
    | null
  /** Requests in flight on the pod (for its memory outlook). */
  requests: Set<Tracked>
  /** KV tokens written (+) and freed (−) by those requests since the pod's last metrics. */
  tokensSinceMetrics: number

  trust: IndexTrustTracker
  indexReady: boolean
  unhealthyUntilMs: number
  /** False while the pod does not answer at all (its metrics unreachable): out until it does. */
  reachable: boolean
}

interface Tracked {
  pod: string
  promptTokens: number
  uncachedTokens: number
  maxTokens: number
  /** Predicted wait for KV memory at dispatch (kept out of the TTFT fit). */
  admissionWaitMs: number
  /** What the index said before trust discounting, for drift. */
  indexedCachedTokens: number
  work: number
  /**
   * Whether this replica was the pod's only sender at dispatch, so saw the whole queue
   * ahead. Only those TTFTs fit the model: with other replicas' work the features cannot
   * see (sent since the metrics, or sized wrong), the fit flattens (a bigger overhead, a
   * smaller slope), and a copy's prefill then looks cheaper than it is.
   */
  sawWholeQueue: boolean
  dispatchedAtMs: number
  firstTokenAtMs: number | null
  generated: number
}

export interface RouteResult {
  decision: RoutingDecision
  /** Kinference's predicted TTFT for every candidate, whichever strategy chose. */
  predictedTtftMs: Map<string, number>
  /** The index's view per candidate (blocks, before trust discounting). */
  indexedBlocks: Map<string, number>
  candidates: PodCandidate[]
}

/**
 * The routing core of one pool, pure: per-pod load as this replica sees it, scraped
 * metrics, the online TTFT model, index trust and health, turned into candidates for the
 * pool's strategy. Driven only through PoolRouter (shared/routing), which every caller uses.
 */
export class RouterCore {
  private readonly options: RouterCoreOptions
  private readonly pods = new Map<string, PodState>()
  private readonly tracked = new Map<string, Tracked>()
  /**
   * One TTFT model for the pool, fitted from every pod's answers: the pods share a GPU
   * profile, and a per-pod fit drifts where traffic is thin; a pod that looked slow once
   * would get no traffic to show otherwise.
   */
  private readonly ttft: OnlineTtftModel

  constructor(options: RouterCoreOptions) {
    this.options = options
    this.ttft = new OnlineTtftModel({
      prior: options.prior,
      forgettingFactor: options.forgettingFactor,
    })
  }

  get strategy(): RoutingStrategy {
    return this.options.strategy
  }

  podNames(): string[] {
    return [...this.pods.keys()]
  }

  addPod(name: string, weight = 100): void {
    if (this.pods.has(name)) return
    this.pods.set(name, {
      name,
      weight,
      kvCapacityTokens: this.options.kvCapacityTokens,
      requests: new Set(),
      tokensSinceMetrics: 0,

      load: { inFlight: 0, pendingRequests: 0, pendingPrefillTokens: 0, activeTokens: 0 },
      metrics: null,
      trust: new IndexTrustTracker({ tolerance: this.options.driftTolerance }),
      indexReady: false,
      unhealthyUntilMs: 0,
      reachable: true,
    })
  }

  removePod(name: string): void {
    if (!this.pods.delete(name)) return
    for (const [id, request] of this.tracked) if (request.pod === name) this.tracked.delete(id)
    this.options.strategy.onPodRemoved?.(name)
  }

  /** The pod's scraped metrics; `kvCapacityTokens` from vllm:cache_config_info when known. */
  updateMetrics(
    name: string,
    view: Omit<PodMetricsView, 'ageMs'>,
    nowMs: number,
    kvCapacityTokens: number | null = null,
  ): void {
    const pod = this.pods.get(name)
    if (!pod) return
    pod.metrics = {
      running: view.running,
      waiting: view.waiting,
      kvCacheUsage: view.kvCacheUsage,
      atMs: nowMs,
      pendingThen: pod.load.pendingRequests,
      inFlightThen: pod.load.inFlight,
    }
    pod.tokensSinceMetrics = 0
    if (kvCapacityTokens !== null && kvCapacityTokens > 0) pod.kvCapacityTokens = kvCapacityTokens
  }

  /** false while the pod's index cannot be believed (gap awaiting replay, new incarnation). */
  setIndexReady(name: string, ready: boolean): void {
    const pod = this.pods.get(name)
    if (!pod) return
    if (ready && !pod.indexReady) pod.trust.reset()
    pod.indexReady = ready
  }

  /** A replica's reported view, read back: the pod's trust, the pool's fitted TTFT model. */
  restore(name: string, view: RestoredPodView, nowMs: number): void {
    const pod = this.pods.get(name)
    if (!pod) return
    pod.trust.restore(view)
    if (!view.healthy) this.markUnhealthy(name, nowMs)
    if (view.ttft.observations > this.ttft.observations)
      this.ttft.restore(view.ttft, view.ttft.observations)
  }

  markUnhealthy(name: string, nowMs: number): void {
    const pod = this.pods.get(name)
    if (pod) pod.unhealthyUntilMs = nowMs + this.options.unhealthyCooldownMs
  }

  /**
   * An unreachable pod is unhealthy until it answers again, however long that takes; once
   * it does, the failures of its requests meanwhile (the outage's) no longer count.
   */
  setReachable(name: string, reachable: boolean): void {
    const pod = this.pods.get(name)
    if (!pod || pod.reachable === reachable) return
    pod.reachable = reachable
    if (reachable) pod.unhealthyUntilMs = 0
  }

  /**
   * Chooses a pod. `indexedBlocks` is the index's answer by pod name: the leading blocks of
   * this request each pod holds (pods it does not name hold none, so a pod added since the
   * lookup counts as cold and one removed since is simply gone). Unhealthy and excluded
   * pods are left out, unless that leaves nobody (fail open: a possibly-recovered pod beats
   * a certain error).
   */
  route(
    request: RoutingRequest,
    indexedBlocks: ReadonlyMap<string, number>,
    context: RoutingContext,
    exclude: ReadonlySet<string> = new Set(),
  ): RouteResult {
    const states = [...this.pods.values()]
    const blocksByPod = new Map(states.map((pod) => [pod.name, indexedBlocks.get(pod.name) ?? 0]))
    const eligible = states.filter((pod) => !exclude.has(pod.name))
    const healthy = eligible.filter((pod) => isHealthy(pod, context.nowMs))
    const chosenStates = healthy.length > 0 ? healthy : eligible
    const candidates = chosenStates.map((pod) =>
      this.candidate(pod, blocksByPod.get(pod.name) ?? 0, context.nowMs),
    )
    const decision = this.options.strategy.choose(request, candidates, context)
    const predictedTtftMs = new Map(
      candidates.map((pod) => [pod.name, predictTtftMs(request, pod, this.options.stepBudget)]),
    )
    for (const score of decision.scores) {
      score.predictedTtftMs ??= predictedTtftMs.get(score.pod) ?? null
    }
    return { decision, predictedTtftMs, indexedBlocks: blocksByPod, candidates }
  }

  /**
   * The request went to `pod`: count its load until its first token and its end, and let
   * strategies that learn from their own decisions (GIE's and SGLang's prefixes) or keep
   * their own accounts (Dynamo's active blocks) follow it: routed here, its first token in
   * firstToken, its end in finished and failed.
   */
  dispatched(
    request: RoutingRequest,
    pod: string,
    result: RouteResult,
    context: RoutingContext,
  ): void {
    const state = this.pods.get(pod)
    const candidate = result.candidates.find((c) => c.name === pod)
    if (!state || !candidate) return
    const nowMs = context.nowMs
    this.options.strategy.onRouted?.(request, pod, context, candidate)
    const features = ttftFeatures(request, candidate, this.options.stepBudget)
    const tracked: Tracked = {
      pod,
      promptTokens: request.promptTokens,
      uncachedTokens: features.uncachedTokens,
      maxTokens: request.maxTokens,
      admissionWaitMs: candidate.memory
        ? admissionWaitMs(candidate.memory, features.uncachedTokens)
        : 0,
      indexedCachedTokens: cachedTokensOf(request, result.indexedBlocks.get(pod) ?? 0),
      work: effectiveWork(features),
      sawWholeQueue: (candidate.metrics?.foreignRequests ?? 0) === 0,
      dispatchedAtMs: nowMs,
      firstTokenAtMs: null,
      generated: 0,
    }
    this.tracked.set(request.id, tracked)
    state.requests.add(tracked)
    state.tokensSinceMetrics += tracked.uncachedTokens

    state.load.inFlight++
    state.load.pendingRequests++
    state.load.pendingPrefillTokens += features.uncachedTokens
    state.load.activeTokens += request.promptTokens
  }

  /**
   * Whether `pod` would start `request` about now: KV room for its uncached tokens after
   * the requests ahead of it, and under two steps of prefill queued there.
   */
  canStart(request: RoutingRequest, result: RouteResult, pod: string): boolean {
    const candidate = result.candidates.find((c) => c.name === pod)
    if (!candidate) return true
    const features = ttftFeatures(request, candidate, this.options.stepBudget)
    if (candidate.load.pendingPrefillTokens >= 2 * this.options.stepBudget) return false
    return !candidate.memory || admissionWaitMs(candidate.memory, features.uncachedTokens) === 0
  }

  /** The first token went by: the TTFT is observed and the prefill leaves the queue. */
  firstToken(id: string, nowMs: number): void {
    const request = this.tracked.get(id)
    const state = request && this.pods.get(request.pod)
    if (!request || !state || request.firstTokenAtMs !== null) return
    request.firstTokenAtMs = nowMs
    state.load.pendingRequests--
    state.load.pendingPrefillTokens -= request.uncachedTokens
    if (this.options.onlineCalibration && request.sawWholeQueue)
      this.ttft.observe(request.work, nowMs - request.dispatchedAtMs - request.admissionWaitMs)
    this.options.strategy.onFirstToken?.(id)
  }

  /** Tokens generated so far (the KV footprint grows with them). */
  progress(id: string, generated: number): void {
    const request = this.tracked.get(id)
    const state = request && this.pods.get(request.pod)
    if (!request || !state || generated <= request.generated) return
    const delta = generated - request.generated
    state.load.activeTokens += delta
    state.tokensSinceMetrics += delta

    request.generated = generated
  }

  /**
   * The request ended. `reportedCachedTokens` is the pod's usage.prompt_tokens_details
   * .cached_tokens (0 when absent from a pod that reports it), or null when unknown.
   */
  finished(id: string, nowMs: number, reportedCachedTokens: number | null): void {
    const request = this.tracked.get(id)
    if (!request) return
    const state = this.pods.get(request.pod)
    if (state && reportedCachedTokens !== null) {
      state.trust.observe(request.indexedCachedTokens, reportedCachedTokens, request.promptTokens)
    }
    this.release(id, request, nowMs)
  }

  /**
   * The request failed; `podAtFault` leaves the pod out for the cool-down. Only a pod that
   * cannot be reached (or says it cannot serve) is at fault: a failure of one request on a
   * pod that answers (its error, its timeout) must not take the pod from everyone else.
   */
  failed(id: string, nowMs: number, podAtFault: boolean): void {
    const request = this.tracked.get(id)
    if (!request) return
    if (podAtFault) this.markUnhealthy(request.pod, nowMs)
    this.release(id, request, nowMs)
  }

  /** Everything the admin API shows about the pods. */
  podReports(nowMs: number) {
    return [...this.pods.values()].map((pod) => ({
      name: pod.name,
      healthy: isHealthy(pod, nowMs),
      indexReady: pod.indexReady,
      trust: pod.trust.trust,
      drift: pod.trust.drift,
      driftObservations: pod.trust.observations,
      load: { ...pod.load },
      metrics: this.metricsView(pod, nowMs),
      ttft: { ...this.ttft.model, observations: this.ttft.observations },
    }))
  }

  private release(id: string, request: Tracked, _nowMs: number): void {
    this.tracked.delete(id)
    this.options.strategy.onReleased?.(id)
    const state = this.pods.get(request.pod)
    if (!state) return
    state.requests.delete(request)
    state.tokensSinceMetrics -= request.uncachedTokens + request.generated

    state.load.inFlight--
    if (request.firstTokenAtMs === null) {
      state.load.pendingRequests--
      state.load.pendingPrefillTokens -= request.uncachedTokens
    }
    state.load.activeTokens -= request.promptTokens + request.generated
  }

  private metricsView(pod: PodState, nowMs: number): PodMetricsView | null {
    if (!pod.metrics) return null
    const ageMs = nowMs - pod.metrics.atMs
    if (ageMs > this.options.metricsStalenessMs) return null
    const { running, waiting, kvCacheUsage, pendingThen, inFlightThen } = pod.metrics
    return {
      running,
      waiting,
      kvCacheUsage,
      ageMs,
      unseenWaiting: Math.max(0, waiting - pendingThen),
      foreignRequests: Math.max(0, running + waiting - inFlightThen),
    }
  }

  private candidate(pod: PodState, indexed: number, nowMs: number): PodCandidate {
    const trusted = pod.indexReady ? Math.floor(indexed * pod.trust.confidence) : 0
    return {
      name: pod.name,
      cachedBlocks: trusted,
      trust: pod.indexReady ? pod.trust.trust : 'load-only',
      load: { ...pod.load },
      metrics: this.metricsView(pod, nowMs),
      ttft: this.ttft.model,
      memory: this.memory(pod, nowMs),
      weight: pod.weight,
    }
  }

  /** The pod's memory as this replica sees it (memoryOutlook); null: capacity unknown. */
  private memory(pod: PodState, nowMs: number): PodMemory | null {
    if (pod.kvCapacityTokens === null) return null
    const metrics = this.metricsView(pod, nowMs)
    return memoryOutlook({
      capacityTokens: pod.kvCapacityTokens,
      reported: metrics ? { usage: metrics.kvCacheUsage, since: pod.tokensSinceMetrics } : null,
      requests: pod.requests,
      load: pod.load,
      stepCost: this.options.stepCost,
    })
  }
}

function isHealthy(pod: PodState, nowMs: number): boolean {
  return pod.reachable && pod.unhealthyUntilMs <= nowMs
}
