import { type FairEntry, FairQueue } from './fair-queue.ts'
import { admissionWaitMs } from './pod-memory.ts'
import type { PoolLookup } from './pool-request.ts'
import type { RouteResult } from './route-result.ts'
import type { RoutingRequest } from './routing-strategy.ts'
import { ttftFeatures } from './ttft-model.ts'

/** What a held request carries: how its owner learns that it was routed at last, or not. */
export interface HeldPayload {
  released(route: RouteResult, nowMs: number, heldMs: number): void
  /**
   * Its objective's deadline came while it was held: it leaves unrouted, and its owner
   * answers it (shed, or burst). Absent: it is routed to its best pod then, as at maxHoldMs.
   */
  expired?(nowMs: number, heldMs: number): void
}

/**
 * A request the router keeps until its best pod can start it, in the order FairQueue
 * gives: its priority band, then its tenant's served tokens, then arrival.
 */
export interface HeldRequest<T> extends FairEntry {
  /** The request and the index's answer when it arrived, by pod name. */
  lookup: PoolLookup
  sinceMs: number
  payload: T
  /** Whether it expires at its deadline (an objective's) rather than going to its best pod. */
  expires: boolean
  /** Whether its deadline is its terms' (a rule's hold), not the pool's maxHoldMs. */
  ownDeadline: boolean
}

/** How a request may be held: its band and the deadline its objective sets. */
export interface HoldTerms {
  /** Priority band: higher first (default 0). */
  band?: number
  /** The latest time it may still be routed; past it, it expires (HeldPayload.expired). */
  deadlineMs?: number | null
  /** false: at the deadline it goes to its best pod instead of expiring (default true). */
  expires?: boolean
}

/** A request offered: dispatched at once, or held (the ticket withdraws it). */
export type Offer<T> =
  | { kind: 'routed'; route: RouteResult }
  | { kind: 'held'; ticket: HeldRequest<T> }

/** What the queue asks of the router (PoolRouter): the strategy's choice now, not dispatched. */
export interface HoldingRouter {
  score(lookup: PoolLookup, nowMs: number): RouteResult
}

export interface AdmissionQueueOptions {
  /** Late binding on: hold requests whose best pod cannot start them now. */
  enabled: boolean
  /** Longest a request is held; then it goes to its best pod whatever that pod's state. */
  maxHoldMs: number
  /** Most requests held; past it new ones go straight to their best pod. */
  maxHeld: number
  /** A release stops routing held requests after this many in a row stay held. */
  scanLimit: number
  /** The pods' per-step token budget (max_num_batched_tokens). */
  stepBudget: number
}

/** The held requests as their owners see them (PoolRouter.held). */
export interface HeldQueue<T> {
  /** Late binding is on: requests may be held. */
  readonly enabled: boolean
  /** Requests held now. */
  readonly size: number
  /** Requests held at least once so far. */
  readonly total: number
  remove(entry: HeldRequest<T>): boolean
  drain(): HeldRequest<T>[]
}

/**
 * Late binding. A pod's own queue is a commitment: a request waiting there for KV memory
 * or behind other prefills cannot move when another pod frees up first, and its presence
 * makes every later prediction for that pod worse. So a request whose best pod (by the
 * strategy's own cost, waits included) cannot start it now stays here, and is routed
 * again whenever something changes: a first token, an answer, fresh metrics. It then goes
 * wherever is best at that moment, usually the pod it waited for.
 *
 * The order it is routed in is token-fair (FairQueue): priority bands first, then the
 * tenant served the fewest tokens, so a tenant sending ten times another's traffic cannot
 * push the other back; every dispatch is charged, held or not. A request with an objective
 * (HoldTerms.deadlineMs) is held even without late binding, and leaves unrouted when its
 * deadline comes; a new request is held, too, while requests ranked before it wait, so it
 * cannot pass them on arrival.
 */
export class AdmissionQueue<T> implements HeldQueue<T> {
  private readonly router: HoldingRouter
  private readonly options: AdmissionQueueOptions
  private readonly held = new FairQueue<HeldRequest<T>>()
  total = 0
  /** Mean time between dispatches (an EWMA), the pace at which held requests can leave. */
  private dispatchGapMs = 0
  private lastDispatchMs: number | null = null

  constructor(router: HoldingRouter, options: AdmissionQueueOptions) {
    this.router = router
    this.options = options
  }

  /** Late binding is on: requests may be held. */
  get enabled(): boolean {
    return this.options.enabled
  }

  /** Requests held now. */
  get size(): number {
    return this.held.size
  }

  /** The ticket of a request offered now under `terms`. */
  ticket(lookup: PoolLookup, payload: T, nowMs: number, terms: HoldTerms = {}): HeldRequest<T> {
    const deadline = terms.deadlineMs ?? null
    return {
      lookup,
      payload,
      sinceMs: nowMs,
      tenant: lookup.request.tenant ?? '',
      band: terms.band ?? 0,
      deadlineMs: deadline ?? nowMs + this.options.maxHoldMs,
      expires: deadline !== null && terms.expires !== false,
      ownDeadline: deadline !== null,
    }
  }

  /** Whether `entry` may be held at all: late binding is on, or its terms set a deadline. */
  mayHold(entry: HeldRequest<T>): boolean {
    return this.options.enabled || entry.ownDeadline
  }

  /** Routes `entry` now (the result, with a pod or none), or holds it (null). */
  offer(entry: HeldRequest<T>, nowMs: number, scored?: RouteResult): RouteResult | null {
    const route = scored ?? this.router.score(entry.lookup, nowMs)
    const hold = this.shouldHold(entry, route, nowMs) || this.rankedBehind(entry, route)
    if (!hold) return route
    this.held.push(entry)
    this.total++
    return null
  }

  /**
   * Routes the held requests again in fair order and hands those that can go now to
   * `dispatch`, which must record the dispatch on the router before returning (so the
   * next one sees the load it adds). Those past their deadline leave first: to `expire`
   * when their deadline is an objective's (it answers whether their owner took them), else
   * to `dispatch`.
   */
  release(
    nowMs: number,
    dispatch: (entry: HeldRequest<T>, route: RouteResult) => void,
    expire: (entry: HeldRequest<T>) => boolean = () => false,
  ): void {
    if (this.held.size === 0) return
    for (const entry of this.held.expire(nowMs)) {
      if (!entry.expires || !expire(entry)) dispatch(entry, this.router.score(entry.lookup, nowMs))
    }
    // Past a run of requests that still cannot start, the rest almost surely cannot
    // either: they wait for the next change rather than cost a routing each.
    let stillHeld = 0
    for (const entry of this.held.serviceOrder()) {
      if (stillHeld >= this.options.scanLimit) break
      const route = this.router.score(entry.lookup, nowMs)
      if (this.shouldHold(entry, route, nowMs)) {
        stillHeld++
        continue
      }
      this.held.remove(entry)
      dispatch(entry, route)
      stillHeld = 0
    }
  }

  /**
   * A request was dispatched at `nowMs`: its tenant is charged its uncached prompt and its
   * output, and the pace of dispatches is updated.
   */
  dispatched(tenant: string, uncachedTokens: number, outputTokens: number, nowMs: number): void {
    this.held.charge(tenant, uncachedTokens, outputTokens)
    if (this.lastDispatchMs !== null && nowMs >= this.lastDispatchMs) {
      const gap = nowMs - this.lastDispatchMs
      this.dispatchGapMs = this.dispatchGapMs === 0 ? gap : 0.9 * this.dispatchGapMs + 0.1 * gap
    }
    this.lastDispatchMs = nowMs
  }

  /**
   * How long a request of `tenant` in `band` offered now would wait here: one dispatch
   * gap for each held request ranked before it (a higher band, its own tenant's, or a
   * tenant served no more than it), and one for itself. 0 when nothing is held.
   */
  waitMs(tenant: string, band: number): number {
    if (this.held.size === 0) return 0
    const mine = this.held.counter(tenant)
    let ahead = 0
    for (const entry of this.held.ordered()) {
      const sameBand = entry.band === band
      const before =
        entry.band > band ||
        (sameBand && (entry.tenant === tenant || this.held.counter(entry.tenant) <= mine))
      if (before) ahead++
    }
    return (ahead + 1) * this.dispatchGapMs
  }

  /**
   * Whether `pod` would start `request` about now: KV room for its uncached tokens after
   * the requests ahead of it, and under two steps of prefill queued there.
   */
  canStart(request: RoutingRequest, route: RouteResult, pod: string): boolean {
    const candidate = route.candidates.find((c) => c.name === pod)
    if (!candidate) return true
    const { stepBudget } = this.options
    const features = ttftFeatures(request, candidate, stepBudget)
    if (candidate.load.pendingPrefillTokens >= 2 * stepBudget) return false
    return !candidate.memory || admissionWaitMs(candidate.memory, features.uncachedTokens) === 0
  }

  remove(entry: HeldRequest<T>): boolean {
    return this.held.remove(entry)
  }

  drain(): HeldRequest<T>[] {
    return this.held.drain()
  }

  private shouldHold(entry: HeldRequest<T>, route: RouteResult, nowMs: number): boolean {
    const pod = route.decision.pod
    if (!this.mayHold(entry) || pod === null) return false
    if (entry.deadlineMs !== null && nowMs >= entry.deadlineMs) return false
    if (this.held.size >= this.options.maxHeld) return false
    return !this.canStart(entry.lookup.request.routing, route, pod)
  }

  /**
   * A request that could start now still waits while one ranked before it is held (a
   * higher band, a tenant served less, or its own tenant's earlier request): arriving
   * when a pod frees up must not let it pass them.
   */
  private rankedBehind(entry: HeldRequest<T>, route: RouteResult): boolean {
    if (!this.mayHold(entry) || route.decision.pod === null) return false
    if (this.held.size >= this.options.maxHeld) return false
    const head = this.held.next()
    if (!head) return false
    if (head.band !== entry.band) return head.band > entry.band
    return (
      head.tenant === entry.tenant ||
      this.held.counter(head.tenant) < this.held.counter(entry.tenant)
    )
  }
}
