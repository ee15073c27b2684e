import type { RouteResult, RouterCore } from './router-core.ts'
import type { RoutingContext, RoutingRequest } from './routing-strategy.ts'

/** A request the router keeps until its best pod can start it. */
export interface HeldRequest<T> {
  request: RoutingRequest
  /** The index's answer when it arrived, by pod name. */
  indexedBlocks: ReadonlyMap<string, number>
  exclude: ReadonlySet<string>
  sinceMs: number
  payload: T
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
}

/**
 * Late binding. A pod's own queue is a commitment: a request waiting there for KV memory
 * or behind other prefills cannot move when another pod frees up first, and its presence
 * makes every later prediction for that pod worse. So a request whose best pod (by the
 * strategy's own cost, waits included) cannot start it now stays here, and is routed
 * again, in arrival order, whenever something changes: a first token, an answer, fresh
 * metrics. It then goes wherever is best at that moment, usually the pod it waited for.
 */
export class AdmissionQueue<T> {
  private readonly core: RouterCore
  private readonly options: AdmissionQueueOptions
  private held: HeldRequest<T>[] = []
  /** Requests held at least once so far. */
  heldTotal = 0

  constructor(core: RouterCore, options: AdmissionQueueOptions) {
    this.core = core
    this.options = options
  }

  /** Late binding is on: requests may be held. */
  get enabled(): boolean {
    return this.options.enabled
  }

  get size(): number {
    return this.held.length
  }

  /** Routes `entry` now (the result, with a pod or none), or holds it (null). */
  offer(entry: HeldRequest<T>, context: RoutingContext): RouteResult | null {
    const route = this.core.route(entry.request, entry.indexedBlocks, context, entry.exclude)
    if (!this.shouldHold(entry, route, context)) return route
    this.held.push(entry)
    this.heldTotal++
    return null
  }

  /**
   * Routes every held request again, oldest first, and hands those that can go now to
   * `dispatch`, which must record the dispatch on the core before returning (so the next
   * one sees the load it adds).
   */
  release(
    context: RoutingContext,
    dispatch: (entry: HeldRequest<T>, route: RouteResult) => void,
  ): void {
    if (this.held.length === 0) return
    const waiting = this.held
    this.held = []
    // Past a run of requests that still cannot start, the rest almost surely cannot
    // either: they wait for the next change rather than cost a routing each.
    let stillHeld = 0
    for (const entry of waiting) {
      if (stillHeld >= this.options.scanLimit && !this.expired(entry, context)) {
        this.held.push(entry)
        continue
      }
      const route = this.core.route(entry.request, entry.indexedBlocks, context, entry.exclude)
      if (this.shouldHold(entry, route, context)) {
        this.held.push(entry)
        stillHeld++
      } else {
        dispatch(entry, route)
        stillHeld = 0
      }
    }
  }

  /** Takes `entry` out (its client left); false when it is no longer held. */
  remove(entry: HeldRequest<T>): boolean {
    const at = this.held.indexOf(entry)
    if (at < 0) return false
    this.held.splice(at, 1)
    return true
  }

  /** Everything held, removed (shutdown): the caller answers them. */
  drain(): HeldRequest<T>[] {
    const all = this.held
    this.held = []
    return all
  }

  private expired(entry: HeldRequest<T>, context: RoutingContext): boolean {
    return context.nowMs - entry.sinceMs >= this.options.maxHoldMs
  }

  private shouldHold(entry: HeldRequest<T>, route: RouteResult, context: RoutingContext): boolean {
    const pod = route.decision.pod
    if (!this.options.enabled || pod === null) return false
    if (this.expired(entry, context)) return false
    if (this.held.length >= this.options.maxHeld) return false
    return !this.core.canStart(entry.request, route, pod)
  }
}
