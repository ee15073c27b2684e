import { admissionWaitMs } from './pod-memory.ts'
import type { PoolLookup } from './pool-request.ts'
import type { RouteResult } from './route-result.ts'
import type { RoutingRequest } from './routing-strategy.ts'
import { ttftFeatures } from './ttft-model.ts'

/** What a held request carries: how its owner learns that it was routed at last. */
export interface HeldPayload {
  released(route: RouteResult, nowMs: number, heldMs: number): void
}

/** A request the router keeps until its best pod can start it. */
export interface HeldRequest<T> {
  /** The request and the index's answer when it arrived, by pod name. */
  lookup: PoolLookup
  sinceMs: number
  payload: T
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
 * again, in arrival order, whenever something changes: a first token, an answer, fresh
 * metrics. It then goes wherever is best at that moment, usually the pod it waited for.
 */
export class AdmissionQueue<T> implements HeldQueue<T> {
  private readonly router: HoldingRouter
  private readonly options: AdmissionQueueOptions
  private held: HeldRequest<T>[] = []
  total = 0

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
    return this.held.length
  }

  /** Routes `entry` now (the result, with a pod or none), or holds it (null). */
  offer(entry: HeldRequest<T>, nowMs: number): RouteResult | null {
    const route = this.router.score(entry.lookup, nowMs)
    if (!this.shouldHold(entry, route, nowMs)) return route
    this.held.push(entry)
    this.total++
    return null
  }

  /**
   * Routes every held request again, oldest first, and hands those that can go now to
   * `dispatch`, which must record the dispatch on the router before returning (so the
   * next one sees the load it adds).
   */
  release(nowMs: number, dispatch: (entry: HeldRequest<T>, route: RouteResult) => void): void {
    if (this.held.length === 0) return
    const waiting = this.held
    this.held = []
    // Past a run of requests that still cannot start, the rest almost surely cannot
    // either: they wait for the next change rather than cost a routing each.
    let stillHeld = 0
    for (const entry of waiting) {
      if (stillHeld >= this.options.scanLimit && !this.expired(entry, nowMs)) {
        this.held.push(entry)
        continue
      }
      const route = this.router.score(entry.lookup, nowMs)
      if (this.shouldHold(entry, route, nowMs)) {
        this.held.push(entry)
        stillHeld++
      } else {
        dispatch(entry, route)
        stillHeld = 0
      }
    }
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
    const at = this.held.indexOf(entry)
    if (at < 0) return false
    this.held.splice(at, 1)
    return true
  }

  drain(): HeldRequest<T>[] {
    const all = this.held
    this.held = []
    return all
  }

  private expired(entry: HeldRequest<T>, nowMs: number): boolean {
    return nowMs - entry.sinceMs >= this.options.maxHoldMs
  }

  private shouldHold(entry: HeldRequest<T>, route: RouteResult, nowMs: number): boolean {
    const pod = route.decision.pod
    if (!this.options.enabled || pod === null) return false
    if (this.expired(entry, nowMs)) return false
    if (this.held.length >= this.options.maxHeld) return false
    return !this.canStart(entry.lookup.request.routing, route, pod)
  }
}
