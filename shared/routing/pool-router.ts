import type { InferencePoolSpec } from '../crd/inference-pool.ts'
import type { BlockKeyChain } from '../kv-index/block-keys.ts'
import {
  AdmissionQueue,
  type HeldPayload,
  type HeldQueue,
  type HoldTerms,
  type Offer,
} from './admission-queue.ts'
import { OnlineStepCost } from './online-step-cost.ts'
import { type PoolRouterOptions, type RouterSettings, routerSettings } from './pool-options.ts'
import {
  type PoolLookup,
  type PoolRequest,
  type PoolRequestInput,
  poolRequest,
  type ResolvedModel,
  resolveModel,
} from './pool-request.ts'
import { type PoolSaturation, poolSaturation } from './pool-saturation.ts'
import { chooseRoute, type RouteResult } from './route-result.ts'
import { type PodReport, RoutedPod } from './routed-pod.ts'
import { type RoutedRequest, routedRequest } from './routed-request.ts'
import type { PodMetricsView, RestoredPodView, RoutingContext } from './routing-strategy.ts'
import { cachedTokensOf, cpuMedium, OnlineTtftModel } from './ttft-model.ts'

export type { AdmissionGate, AdmissionVerdict } from './admission/admission-gate.ts'
export { peerAdmissionGate } from './admission/peer-admission-gate.ts'
// The public face of shared/routing: callers outside it import from this file only.
export type { HeldPayload, HeldQueue, HeldRequest, HoldTerms, Offer } from './admission-queue.ts'
export type { PoolRouterOptions, RouterSettings } from './pool-options.ts'
export type { PoolLookup, PoolRequest, PoolRequestInput, ResolvedModel } from './pool-request.ts'
export { anyModel, resolveModel } from './pool-request.ts'
export { type PoolSaturation, poolSaturation } from './pool-saturation.ts'
export type { RouteResult } from './route-result.ts'
export type { PodReport } from './routed-pod.ts'
// The strategy interface: what a strategy is given and answers (all of routing-strategy.ts).
export type * from './routing-strategy.ts'

/** A pool's prediction for one request (PoolRouter.prediction). */
export interface PoolPrediction {
  ttftMs: number
  tpotMs: number | null
}

/**
 * One pool's routing, whoever drives it (the scorer, the discrete-event benchmark, the
 * estimate and admin APIs, the decision benchmark): prepare a request (block keys), look it
 * up once, score it (the pool's strategy among the pods, as this replica sees them: its own
 * load there, their scraped metrics, the pool's online TTFT model, index trust and health),
 * offer it (dispatched now or held by late binding), and follow it (first token, progress,
 * end). Dispatching counts the request's load on its pod and adds its blocks there as
 * speculative entries; a first token, an end, fresh metrics or a new pod route held
 * requests again. Pure: times are passed in, I/O goes through the index port.
 */
export class PoolRouter<T extends HeldPayload = HeldPayload> {
  readonly name: string
  readonly spec: InferencePoolSpec
  /** Output tokens planned for a request that sets no limit (see KinferenceParameters). */
  readonly expectedOutputTokens: number
  private readonly options: PoolRouterOptions
  private readonly settings: RouterSettings
  private readonly pods = new Map<string, RoutedPod>()
  private readonly requests = new Map<string, RoutedRequest>()
  /**
   * One TTFT model and one decode step (OnlineStepCost) for the pool, fitted from every
   * pod's answers: the pods share a GPU profile, and a per-pod fit drifts where traffic is
   * thin; a pod that looked slow once would get no traffic to show otherwise.
   */
  private readonly ttft: OnlineTtftModel
  private readonly decode: OnlineStepCost
  private readonly queue: AdmissionQueue<T>
  /** Requests held by late binding: withdrawn when their clients leave, drained at shutdown. */
  readonly held: HeldQueue<T>
  private learnedBlockSize: number | null = null

  constructor(options: PoolRouterOptions) {
    this.options = options
    this.name = options.name
    this.spec = options.spec
    this.settings = options.settings ?? routerSettings(options.spec, options.strategies)
    const { prior, forgettingFactor } = this.settings
    this.ttft = new OnlineTtftModel({ prior, forgettingFactor })
    this.decode = new OnlineStepCost({ prior: this.settings.stepCost, forgettingFactor })
    this.queue = new AdmissionQueue<T>(this, this.settings.admission)
    this.held = this.queue
    this.expectedOutputTokens = this.settings.expectedOutputTokens
  }

  get strategy(): string {
    return this.settings.strategy.name
  }

  /** The served model a request names, or null when this pool does not serve it. */
  served(model: string): ResolvedModel | null {
    return resolveModel(this.spec, model)
  }

  /**
   * The block size requests are keyed with: the one the pods' full-attention events carry
   * once seen (a hybrid model's attention group has its own, docs/vllm-wire.md §1.8),
   * else the pool's `blockSize`.
   */
  get blockSize(): number {
    return this.learnedBlockSize ?? this.spec.blockSize
  }

  /**
   * The pool's pods announce full-attention blocks of `blockSize` tokens (all pods of a
   * pool run one configuration, so the last one told holds for all); not a positive
   * integer: ignored.
   */
  learnBlockSize(blockSize: number): void {
    if (Number.isSafeInteger(blockSize) && blockSize > 0) this.learnedBlockSize = blockSize
  }

  /** The request keyed with the pool's block size (see poolRequest). */
  prepare(input: PoolRequestInput): PoolRequest {
    const usesPromptText = this.settings.strategy.usesPromptText === true
    return poolRequest(input, this.served(input.model), this.blockSize, usesPromptText)
  }

  /**
   * One index round trip for every pod of the pool, answered by pod name; when some pod
   * has a tier (CPU offload), one more for the blocks continuing each pod's GPU hit there.
   */
  async lookup(request: PoolRequest): Promise<PoolLookup> {
    const pods = this.podNames()
    const held = await this.options.index.lookup(request.keys, pods, this.options.indexNowMs())
    const blocks = new Map(pods.map((pod, i) => [pod, held[i] ?? 0]))
    const tiers = this.options.tiers
    if (!tiers?.active) return { request, blocks }
    const gpu = pods.map((pod) => blocks.get(pod) ?? 0)
    const found = await tiers.lookup(request.keys, pods, gpu)
    const tierBlocks = new Map(
      pods.flatMap((pod, i) => {
        const media = found[i] ?? {}
        return Object.keys(media).length > 0 ? [[pod, media] as const] : []
      }),
    )
    return tierBlocks.size > 0 ? { request, blocks, tierBlocks } : { request, blocks }
  }

  /** The strategy's choice now, nothing dispatched: estimates, admin lookups, benchmarks. */
  score(lookup: PoolLookup, nowMs: number, exclude?: ReadonlySet<string>): RouteResult {
    const { strategy, stepBudget, hostLink } = this.settings
    const choice = { strategy, stepBudget, ttft: this.ttft, hostLink }
    return chooseRoute([...this.pods.values()], lookup, choice, this.context(nowMs), exclude)
  }

  /** How close the pool is to its limits for this request (see poolSaturation). */
  saturation(route: RouteResult): PoolSaturation {
    return poolSaturation(this.spec, route)
  }

  /** Prompt tokens `pod` would serve from cache (its GPU, then its CPU tier), per the lookup. */
  matchedTokens(lookup: PoolLookup, pod: string): number {
    const cpu = lookup.tierBlocks?.get(pod)?.[cpuMedium] ?? 0
    return cachedTokensOf(lookup.request.routing, (lookup.blocks.get(pod) ?? 0) + cpu)
  }

  /**
   * Routes the request and dispatches it to its best pod, or, with late binding, holds it
   * while that pod cannot start it; `route` reuses a score computed just now.
   */
  offer(
    lookup: PoolLookup,
    payload: T,
    nowMs: number,
    route?: RouteResult,
    terms?: HoldTerms,
  ): Offer<T> {
    const ticket = this.queue.ticket(lookup, payload, nowMs, terms)
    if (!this.queue.mayHold(ticket))
      return { kind: 'routed', route: this.dispatchNow(lookup, nowMs, { route }) }
    const routed = this.queue.offer(ticket, nowMs, route)
    if (routed === null) return { kind: 'held', ticket }
    this.dispatch(lookup, routed, nowMs)
    return { kind: 'routed', route: routed }
  }

  /**
   * What a request's objectives are judged on (judgeObjective), by the scorer for policy and
   * by the DES alike: its chosen pod's predicted TTFT plus the wait behind the held requests
   * ranked before it (0 when nothing is held), and the pod's predicted time per output
   * token. Null without a pod.
   */
  prediction(lookup: PoolLookup, route: RouteResult): PoolPrediction | null {
    const pod = route.decision.pod
    const ttftMs = pod === null ? undefined : route.predictedTtftMs.get(pod)
    if (pod === null || ttftMs === undefined) return null
    const heldWaitMs = this.queue.waitMs(lookup.request.tenant ?? '', 0)
    return { ttftMs: ttftMs + heldWaitMs, tpotMs: route.predictedTpotMs.get(pod) ?? null }
  }

  /** Routes (unless `route` is given) and dispatches at once, never holding: retries. */
  dispatchNow(
    lookup: PoolLookup,
    nowMs: number,
    options: { exclude?: ReadonlySet<string>; route?: RouteResult | undefined } = {},
  ): RouteResult {
    const route = options.route ?? this.score(lookup, nowMs, options.exclude)
    this.dispatch(lookup, route, nowMs)
    return route
  }

  /** Routes the held requests again; those that can start now are dispatched, oldest first. */
  release(nowMs: number): void {
    this.queue.release(
      nowMs,
      (entry, route) => {
        this.dispatch(entry.lookup, route, nowMs)
        entry.payload.released(route, nowMs, nowMs - entry.sinceMs)
      },
      (entry) => {
        if (!entry.payload.expired) return false
        entry.payload.expired(nowMs, nowMs - entry.sinceMs)
        return true
      },
    )
  }

  /** The first token went by: the TTFT is observed and the prefill leaves the queue. */
  firstToken(id: string, nowMs: number): void {
    const request = this.requests.get(id)
    const pod = request && this.pods.get(request.pod)
    if (request && pod && request.firstTokenAtMs === null) {
      pod.firstToken(request, nowMs)
      this.renewSpeculative(request)
      const ttftMs = nowMs - request.dispatchedAtMs - request.admissionWaitMs - request.tierLoadMs
      if (this.settings.onlineCalibration && request.sawWholeQueue)
        this.ttft.observe(request.work, ttftMs)
      this.settings.strategy.onFirstToken?.(id)
    }
    this.release(nowMs)
  }

  /** Tokens generated so far, by `nowMs` when known (the KV footprint grows with them). */
  progress(id: string, generated: number, nowMs?: number): void {
    const request = this.requests.get(id)
    const pod = request && this.pods.get(request.pod)
    if (!request || !pod || generated <= request.generated) return
    pod.progressed(generated - request.generated, nowMs, request.firstTokenAtMs !== null)
    request.generated = generated
  }

  /**
   * The request ended (its decode observed). `reportedCachedTokens` is the pod's usage
   * .prompt_tokens_details.cached_tokens (0 if absent from a pod that reports it) or null.
   */
  finished(id: string, nowMs: number, reportedCachedTokens: number | null): void {
    const request = this.requests.get(id)
    const pod = request && this.pods.get(request.pod)
    const decoded = request && pod ? pod.finished(request, nowMs, reportedCachedTokens) : null
    if (decoded && this.settings.onlineCalibration) this.decode.observe(decoded)
    if (request) this.ended(id, request, nowMs)
    this.release(nowMs)
  }

  /**
   * The request failed; `podAtFault` leaves the pod out for the cool-down. Only a pod that
   * cannot be reached (or says it cannot serve) is at fault: a failure of one request on a
   * pod that answers (its error, its timeout) must not take the pod from everyone else.
   */
  failed(id: string, nowMs: number, podAtFault: boolean): void {
    const request = this.requests.get(id)
    if (request && podAtFault) this.pods.get(request.pod)?.markUnhealthy(nowMs)
    if (request) this.ended(id, request, nowMs)
    this.release(nowMs)
  }

  podNames(): string[] {
    return [...this.pods.keys()]
  }

  /** A new pod: it may start what is held. */
  addPod(name: string, nowMs: number, weight = 100): void {
    if (!this.pods.has(name))
      this.pods.set(name, new RoutedPod(name, weight, this.settings, () => this.decode.stepCost))
    this.release(nowMs)
  }

  /** A pod gone: its requests are forgotten; held requests go elsewhere when they can. */
  removePod(name: string, nowMs: number): void {
    if (this.pods.delete(name)) {
      for (const [id, request] of this.requests) if (request.pod === name) this.requests.delete(id)
      this.settings.strategy.onPodRemoved?.(name)
    }
    this.release(nowMs)
  }

  setIndexReady(name: string, ready: boolean): void {
    this.pods.get(name)?.setIndexReady(ready)
  }

  /** The pod answers (again) or does not (see RoutedPod.setReachable). */
  setReachable(name: string, reachable: boolean, nowMs: number): void {
    this.pods.get(name)?.setReachable(reachable)
    // Held requests waiting for this pod may now go elsewhere, or to it.
    this.release(nowMs)
  }

  /** A replica's reported view, read back: the pod's trust and health, the pool's TTFT model. */
  restore(name: string, view: RestoredPodView, nowMs: number): void {
    const pod = this.pods.get(name)
    if (!pod) return
    pod.restore(view, nowMs)
    if (view.ttft.observations > this.ttft.observations)
      this.ttft.restore(view.ttft, view.ttft.observations)
  }

  /** Fresh metrics of a pod, capacity included when known: they may show room for the held. */
  updateMetrics(
    name: string,
    view: Omit<PodMetricsView, 'ageMs'>,
    nowMs: number,
    kvCapacityTokens: number | null = null,
  ): void {
    this.pods.get(name)?.updateMetrics(view, nowMs, kvCapacityTokens)
    this.release(nowMs)
  }

  /** Everything the admin API shows about the pods. */
  podReports(nowMs: number): PodReport[] {
    const ttft = { ...this.ttft.model, observations: this.ttft.observations }
    return [...this.pods.values()].map((pod) => pod.report(nowMs, ttft, this.decode.report))
  }

  /**
   * Counts the request's load on its pod until its first token and its end, lets strategies
   * that learn from their own decisions (GIE's and SGLang's prefixes) or keep their own
   * accounts (Dynamo's active blocks) follow it, and adds its blocks there as speculative
   * entries unless the strategy runs without them, for as long as the pod's feed needs
   * (RoutedPod.speculativeTtlMs).
   */
  private dispatch(lookup: PoolLookup, route: RouteResult, nowMs: number): void {
    const name = route.decision.pod
    if (name === null) return
    const { routing, keys } = lookup.request
    const matched = this.matchedTokens(lookup, name)
    const tenant = lookup.request.tenant ?? ''
    this.queue.dispatched(tenant, routing.promptTokens - matched, routing.maxTokens, nowMs)
    const pod = this.pods.get(name)
    const candidate = route.candidates.find((c) => c.name === name)
    const speculative = this.settings.speculativeTtlMs !== null
    if (pod && candidate) {
      this.settings.strategy.onRouted?.(routing, name, this.context(nowMs), candidate)
      const indexed = route.indexedBlocks.get(name) ?? 0
      const indexedCpu = lookup.tierBlocks?.get(name)?.[cpuMedium] ?? 0
      const request = routedRequest(routing, candidate, indexed + indexedCpu, this.settings, nowMs)
      if (speculative) request.speculativeKeys = keys
      this.requests.set(routing.id, request)
      pod.started(request)
    }
    if (!speculative) return
    // Until its prefill has run, nothing but this entry says where the prefix is going:
    // it lasts the predicted wait for the first token, then the TTL.
    this.addSpeculative(name, keys, route.predictedTtftMs.get(name) ?? 0)
  }

  /**
   * The request's prefill is done: its blocks are on the pod, and its events on their
   * way. Its entries, written at dispatch, may have lapsed while it queued for longer than
   * predicted (in overload, queues outlast the TTL); renewed from now, they bridge to the
   * events, and the index does not forget where a prefix went when the pod is busiest.
   */
  private renewSpeculative(request: RoutedRequest): void {
    const keys = request.speculativeKeys
    if (!keys) return
    request.speculativeKeys = undefined
    this.addSpeculative(request.pod, keys, 0)
  }

  /** Entries for `pod` lasting `waitMs` and then the pod's TTL (none with a TTL of 0). */
  private addSpeculative(name: string, keys: BlockKeyChain, waitMs: number): void {
    const base = this.settings.speculativeTtlMs ?? 0
    const ttlMs = this.pods.get(name)?.speculativeTtlMs(base) ?? base
    if (ttlMs <= 0) return
    const expiresAtMs = this.options.indexNowMs() + waitMs + ttlMs
    this.options.index
      .addSpeculative(name, keys, keys.length / 2, expiresAtMs)
      .catch((error: unknown) =>
        this.options.onError(`speculative entry for ${name} failed: ${(error as Error).message}`),
      )
  }

  /** The request finished or failed: nothing of it is active on its pod any more. */
  private ended(id: string, request: RoutedRequest, nowMs: number): void {
    this.requests.delete(id)
    this.settings.strategy.onReleased?.(id)
    this.pods.get(request.pod)?.ended(request, nowMs)
  }

  private context(nowMs: number): RoutingContext {
    return { nowMs, random: this.options.random }
  }
}
