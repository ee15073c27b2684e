import type { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  AdmissionQueue,
  type AdmissionQueueOptions,
  type HeldRequest,
} from '../../shared/routing/admission-queue.ts'
import type { RouteResult, RouterCore } from '../../shared/routing/router-core.ts'
import type { RoutingContext, RoutingRequest } from '../../shared/routing/routing-strategy.ts'

/** A request routed by late binding: its route (pod null: none) and how long it was held. */
export interface Admitted {
  route: RouteResult
  heldMs: number
}

export interface AdmitOptions {
  /** Aborted when the client leaves: a held request leaves the queue, never dispatched. */
  signal: AbortSignal
  /** Settles once the client has its answer; shutdown waits for it (bounded). */
  answered: () => Promise<unknown>
  /** A route computed for this request just now (the saturation check's), to reuse. */
  route?: RouteResult
}

export type HoldOutcome = 'dispatched' | 'client-gone' | 'shutdown'

export interface PoolAdmissionOptions {
  core: RouterCore
  spec: InferencePoolSpec
  random: () => number
  /** Period of the release that lets maxHoldMs expire when nothing else happens. */
  releaseEveryMs?: number
  /** A held request left the queue (for the hold-time histogram). */
  onHoldEnd?: (heldMs: number, outcome: HoldOutcome) => void
}

/** What a held request's queue entry carries: how to answer the handler awaiting it. */
interface Waiter {
  resolve: (admitted: Admitted | null) => void
  reject: (error: KinfError) => void
  answered: () => Promise<unknown>
  /** Answered, or its client left. */
  settled: boolean
}

const maxHeld = 10_000
const scanLimit = 16
const shutdownGraceMs = 1_000

/** Late binding on for this pool: the Kinference strategy with routing.kinference.lateBinding. */
export function lateBindingEnabled(spec: InferencePoolSpec): boolean {
  return spec.routing.strategy === 'kinference' && (spec.routing.kinference?.lateBinding ?? false)
}

/** The admission queue of a pool, the same in the scorer and the discrete-event benchmark. */
export function admissionQueueOptions(spec: InferencePoolSpec): AdmissionQueueOptions {
  return {
    enabled: lateBindingEnabled(spec),
    maxHoldMs: spec.routing.kinference?.maxHoldMs ?? 30_000,
    maxHeld,
    scanLimit,
  }
}

/**
 * Late binding for one pool of the live scorer, as the discrete-event benchmark runs it:
 * a request whose best pod cannot start it now waits here (its handler awaiting), and is
 * routed again on every first token, answer and metrics scrape of the pool, and
 * periodically so that maxHoldMs expires on a quiet pool. Every dispatch, immediate or
 * released, is recorded on the core here, before the next request is routed.
 */
export class PoolAdmission {
  readonly enabled: boolean
  private readonly options: PoolAdmissionOptions
  private readonly queue: AdmissionQueue<Waiter>
  private readonly timer: NodeJS.Timeout | null
  private live = 0
  private closed = false

  constructor(options: PoolAdmissionOptions) {
    this.options = options
    this.enabled = lateBindingEnabled(options.spec)
    this.queue = new AdmissionQueue<Waiter>(options.core, admissionQueueOptions(options.spec))
    this.timer = this.enabled
      ? setInterval(() => this.release(), options.releaseEveryMs ?? 50).unref()
      : null
  }

  /** Requests held now whose clients are still there. */
  get held(): number {
    return this.live
  }

  /** Requests held at least once since the start. */
  get heldTotal(): number {
    return this.queue.heldTotal
  }

  /**
   * Routes the request and records its dispatch on the core, now or once its best pod can
   * start it. Resolves with the route (pod null when there is none), or null when the
   * client left while held; rejects when the scorer shuts down first.
   */
  async admit(
    request: RoutingRequest,
    indexedBlocks: readonly number[],
    options: AdmitOptions,
  ): Promise<Admitted | null> {
    if (this.closed) throw shuttingDown()
    if (options.signal.aborted) return null
    if (!this.enabled) return this.admitNow(request, indexedBlocks, options.route)
    const context = this.context()
    // A fresh route whose pod can start the request now is what offer() would answer.
    const given = options.route
    const offered = given && !this.mayHold(request, given) ? { route: given } : null
    const outcome = offered ?? this.offer(request, indexedBlocks, options, context)
    if ('held' in outcome) return outcome.held
    this.dispatch(request, outcome.route, context)
    return { route: outcome.route, heldMs: 0 }
  }

  /** Without late binding: routes (unless `route` is given) and records the dispatch. */
  admitNow(
    request: RoutingRequest,
    indexedBlocks: readonly number[],
    route?: RouteResult,
  ): Admitted {
    const context = this.context()
    const chosen = route ?? this.options.core.route(request, indexedBlocks, context)
    this.dispatch(request, chosen, context)
    return { route: chosen, heldMs: 0 }
  }

  /** Routes the held requests again; those that can start now are dispatched, oldest first. */
  release(): void {
    if (this.queue.size === 0 || this.closed) return
    const context = this.context()
    this.queue.release(context, (entry, route) => this.released(entry, route, context))
  }

  /**
   * Shutdown: every held request is answered with `error`, and this waits (a second at
   * most) until their clients have the answer. Later requests are refused at once.
   */
  async close(error: KinfError = shuttingDown()): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    const answered: Promise<unknown>[] = []
    const now = performance.now()
    for (const entry of this.queue.drain()) {
      const waiter = entry.payload
      if (waiter.settled) continue
      waiter.settled = true
      this.live--
      this.options.onHoldEnd?.(now - entry.sinceMs, 'shutdown')
      waiter.reject(error)
      answered.push(waiter.answered())
    }
    if (answered.length === 0) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled(answered),
      new Promise((resolve) => {
        timer = setTimeout(resolve, shutdownGraceMs).unref()
      }),
    ])
    clearTimeout(timer)
  }

  private mayHold(request: RoutingRequest, route: RouteResult): boolean {
    const pod = route.decision.pod
    return this.enabled && pod !== null && !this.options.core.canStart(request, route, pod)
  }

  private offer(
    request: RoutingRequest,
    indexedBlocks: readonly number[],
    options: AdmitOptions,
    context: RoutingContext,
  ): { route: RouteResult } | { held: Promise<Admitted | null> } {
    // The entry's resolvers are filled in only if it is held (nothing settles it before).
    const payload: Waiter = {
      resolve: () => {},
      reject: () => {},
      answered: options.answered,
      settled: false,
    }
    const entry: HeldRequest<Waiter> = {
      request,
      indexedBlocks,
      exclude: new Set(),
      sinceMs: context.nowMs,
      payload,
    }
    const route = this.queue.offer(entry, context)
    if (route) return { route }
    const held = new Promise<Admitted | null>((resolve, reject) => {
      payload.resolve = resolve
      payload.reject = reject
    })
    this.live++
    options.signal.addEventListener(
      'abort',
      () => {
        if (payload.settled) return
        payload.settled = true
        this.queue.remove(entry)
        this.live--
        this.options.onHoldEnd?.(performance.now() - entry.sinceMs, 'client-gone')
        payload.resolve(null)
      },
      { once: true },
    )
    return { held }
  }

  private released(entry: HeldRequest<Waiter>, route: RouteResult, context: RoutingContext): void {
    const waiter = entry.payload
    if (waiter.settled) return
    waiter.settled = true
    this.live--
    this.dispatch(entry.request, route, context)
    const heldMs = context.nowMs - entry.sinceMs
    this.options.onHoldEnd?.(heldMs, 'dispatched')
    waiter.resolve({ route, heldMs })
  }

  private dispatch(request: RoutingRequest, route: RouteResult, context: RoutingContext): void {
    const pod = route.decision.pod
    if (pod !== null) this.options.core.dispatched(request, pod, route, context)
  }

  private context(): RoutingContext {
    return { nowMs: performance.now(), random: this.options.random }
  }
}

function shuttingDown(): KinfError {
  return new KinfError('upstream_unavailable', 'the scorer is shutting down; retry elsewhere')
}
