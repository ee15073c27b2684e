import type { InferencePoolSpec } from '../crd/inference-pool.ts'
import type { KvIndex } from '../kv-index/kv-index.ts'
import { AdmissionQueue, type HeldRequest } from './admission-queue.ts'
import { admissionQueueOptions, kinferenceParametersOf, routerCoreOptions } from './pool-options.ts'
import {
  type PoolRequest,
  type PoolRequestInput,
  poolRequest,
  type ServedModel,
  servedModel,
} from './pool-request.ts'
import { type PoolSaturation, poolSaturation } from './pool-saturation.ts'
import { type RouteResult, RouterCore } from './router-core.ts'
import type { PodMetricsView, RestoredPodView, RoutingContext } from './routing-strategy.ts'
import type { StrategyRegistry } from './strategies/define-strategy.ts'
import { cachedTokensOf } from './ttft-model.ts'

export type { PoolRequest, PoolRequestInput, ServedModel }

/** The index's answer for one request, by pod name: positions never carry meaning. */
export interface PoolLookup {
  request: PoolRequest
  blocks: ReadonlyMap<string, number>
}

/** What a held request carries: how its owner learns that it was routed at last. */
export interface HeldPayload {
  released(route: RouteResult, nowMs: number, heldMs: number): void
}

export type Offer<T> =
  | { kind: 'routed'; route: RouteResult }
  | { kind: 'held'; ticket: HeldRequest<Held<T>> }

interface Held<T> {
  lookup: PoolLookup
  payload: T
}

export interface PoolRouterOptions {
  name: string
  spec: InferencePoolSpec
  /** The KV index (shared with other pools and scorer replicas). */
  index: KvIndex
  /** Tie-breaks and exploration: Math.random in the scorer, seeded in simulations. */
  random: () => number
  /**
   * The index's clock, for speculative entries' expiry and lookups: wall time in the scorer
   * (replicas share the index), virtual time in simulations.
   */
  indexNowMs: () => number
  /** A speculative entry could not be written (the request goes on without it). */
  onError: (message: string) => void
  /** Where the spec's routing strategy is found: the built-ins unless given. */
  strategies?: StrategyRegistry
}

/**
 * One pool's routing, whoever drives it (the scorer, the discrete-event benchmark, the
 * estimate and admin APIs, the decision benchmark): prepare a request (block keys), look
 * it up once, score it, offer it (dispatched now or held by late binding), and follow it
 * (first token, progress, end). Dispatching counts the request's load on its pod and adds
 * its blocks there as speculative entries; a first token, an end, fresh metrics or a new
 * pod route held requests again. Pure: times are passed in, I/O goes through the index port.
 */
export class PoolRouter<T extends HeldPayload = HeldPayload> {
  readonly name: string
  readonly spec: InferencePoolSpec
  private readonly options: PoolRouterOptions
  private readonly core: RouterCore
  private readonly queue: AdmissionQueue<Held<T>>
  private readonly speculativeTtlMs: number
  /** Output tokens planned for a request that sets no limit (see KinferenceParameters). */
  readonly expectedOutputTokens: number
  private learnedBlockSize: number | null = null

  constructor(options: PoolRouterOptions) {
    this.options = options
    this.name = options.name
    this.spec = options.spec
    this.core = new RouterCore(routerCoreOptions(options.spec, options.strategies))
    this.queue = new AdmissionQueue<Held<T>>(this.core, admissionQueueOptions(options.spec))
    const kinference = kinferenceParametersOf(options.spec)
    this.speculativeTtlMs = kinference.speculativeTtlMs
    this.expectedOutputTokens = kinference.expectedOutputTokens
  }

  get strategy(): string {
    return this.core.strategy.name
  }

  /** Late binding is on: requests may be held. */
  get holds(): boolean {
    return this.queue.enabled
  }

  /** Requests held now. */
  get held(): number {
    return this.queue.size
  }

  /** Requests held at least once since the start. */
  get heldTotal(): number {
    return this.queue.heldTotal
  }

  /** The served model a request names, or null when this pool does not serve it. */
  served(model: string): ServedModel | null {
    return servedModel(this.spec, model)
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
    const served = this.served(input.model)
    return poolRequest(input, served, this.blockSize, this.core.strategy.usesPromptText === true)
  }

  /** One index round trip for every pod of the pool, answered by pod name. */
  async lookup(request: PoolRequest): Promise<PoolLookup> {
    const pods = this.core.podNames()
    const held = await this.options.index.lookup(request.keys, pods, this.options.indexNowMs())
    return { request, blocks: new Map(pods.map((pod, i) => [pod, held[i] ?? 0])) }
  }

  /** The strategy's choice now, nothing dispatched: estimates, admin lookups, benchmarks. */
  score(lookup: PoolLookup, nowMs: number, exclude?: ReadonlySet<string>): RouteResult {
    return this.core.route(lookup.request.routing, lookup.blocks, this.context(nowMs), exclude)
  }

  /** How close the pool is to its limits for this request (see poolSaturation). */
  saturation(route: RouteResult): PoolSaturation {
    return poolSaturation(this.spec, route)
  }

  /** Prompt tokens `pod` would serve from cache, per the lookup. */
  matchedTokens(lookup: PoolLookup, pod: string): number {
    return cachedTokensOf(lookup.request.routing, lookup.blocks.get(pod) ?? 0)
  }

  /**
   * Routes the request and dispatches it to its best pod, or, with late binding, holds it
   * while that pod cannot start it; `route` reuses a score computed just now.
   */
  offer(lookup: PoolLookup, payload: T, nowMs: number, route?: RouteResult): Offer<T> {
    if (!this.queue.enabled || (route && !this.mayHold(lookup, route)))
      return { kind: 'routed', route: this.dispatchNow(lookup, nowMs, { route }) }
    const ticket: HeldRequest<Held<T>> = {
      request: lookup.request.routing,
      indexedBlocks: lookup.blocks,
      exclude: new Set(),
      sinceMs: nowMs,
      payload: { lookup, payload },
    }
    const routed = this.queue.offer(ticket, this.context(nowMs))
    if (routed === null) return { kind: 'held', ticket }
    this.dispatch(lookup, routed, nowMs)
    return { kind: 'routed', route: routed }
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

  /** A held request whose client left: out of the queue; false when no longer held. */
  withdraw(ticket: HeldRequest<Held<T>>): boolean {
    return this.queue.remove(ticket)
  }

  /** Shutdown: every held request, out of the queue, for its owner to answer. */
  drain(): { payload: T; sinceMs: number }[] {
    return this.queue
      .drain()
      .map((entry) => ({ payload: entry.payload.payload, sinceMs: entry.sinceMs }))
  }

  /** Routes the held requests again; those that can start now are dispatched, oldest first. */
  release(nowMs: number): void {
    if (this.queue.size === 0) return
    this.queue.release(this.context(nowMs), (entry, route) => {
      this.dispatch(entry.payload.lookup, route, nowMs)
      entry.payload.payload.released(route, nowMs, nowMs - entry.sinceMs)
    })
  }

  firstToken(id: string, nowMs: number): void {
    this.core.firstToken(id, nowMs)
    this.release(nowMs)
  }

  progress(id: string, generated: number): void {
    this.core.progress(id, generated)
  }

  /** The request ended; `reportedCachedTokens` as RouterCore.finished takes it. */
  finished(id: string, nowMs: number, reportedCachedTokens: number | null): void {
    this.core.finished(id, nowMs, reportedCachedTokens)
    this.release(nowMs)
  }

  failed(id: string, nowMs: number, podAtFault: boolean): void {
    this.core.failed(id, nowMs, podAtFault)
    this.release(nowMs)
  }

  podNames(): string[] {
    return this.core.podNames()
  }

  /** A new pod: it may start what is held. */
  addPod(name: string, nowMs: number, weight?: number): void {
    this.core.addPod(name, weight)
    this.release(nowMs)
  }

  /** A pod gone: its requests are forgotten; held requests go elsewhere when they can. */
  removePod(name: string, nowMs: number): void {
    this.core.removePod(name)
    this.release(nowMs)
  }

  setIndexReady(name: string, ready: boolean): void {
    this.core.setIndexReady(name, ready)
  }

  /** The pod answers (again) or does not (see RouterCore.setReachable). */
  setReachable(name: string, reachable: boolean, nowMs: number): void {
    this.core.setReachable(name, reachable)
    // Held requests waiting for this pod may now go elsewhere, or to it.
    this.release(nowMs)
  }

  /** A replica's reported view of the pod, read back (see RouterCore.restore). */
  restore(name: string, view: RestoredPodView, nowMs: number): void {
    this.core.restore(name, view, nowMs)
  }

  /** Fresh metrics of a pod; they may show room for what is held. */
  updateMetrics(
    name: string,
    view: Omit<PodMetricsView, 'ageMs'>,
    nowMs: number,
    kvCapacityTokens: number | null = null,
  ): void {
    this.core.updateMetrics(name, view, nowMs, kvCapacityTokens)
    this.release(nowMs)
  }

  podReports(nowMs: number) {
    return this.core.podReports(nowMs)
  }

  private mayHold(lookup: PoolLookup, route: RouteResult): boolean {
    const pod = route.decision.pod
    return pod !== null && !this.core.canStart(lookup.request.routing, route, pod)
  }

  private dispatch(lookup: PoolLookup, route: RouteResult, nowMs: number): void {
    const pod = route.decision.pod
    if (pod === null) return
    const { routing, keys } = lookup.request
    this.core.dispatched(routing, pod, route, this.context(nowMs))
    const expiresAtMs = this.options.indexNowMs() + this.speculativeTtlMs
    this.options.index
      .addSpeculative(pod, keys, keys.length / 2, expiresAtMs)
      .catch((error: unknown) =>
        this.options.onError(`speculative entry for ${pod} failed: ${(error as Error).message}`),
      )
  }

  private context(nowMs: number): RoutingContext {
    return { nowMs, random: this.options.random }
  }
}
