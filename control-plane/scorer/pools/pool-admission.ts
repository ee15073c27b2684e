import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type {
  HeldPayload,
  HoldTerms,
  PoolLookup,
  PoolRouter,
  RouteResult,
} from '../../../shared/routing/pool-router.ts'

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
  /** Its band and the deadline its rule's hold sets; past the deadline it is answered 429. */
  terms?: HoldTerms
}

export type HoldOutcome = 'dispatched' | 'client-gone' | 'shutdown' | 'expired'

/** A held request's handler, awaiting its route. */
export interface Waiter extends HeldPayload {
  reject: (error: KinfError) => void
  answered: () => Promise<unknown>
  /** Answered, or its client left. */
  settled: boolean
}

export interface PoolAdmissionOptions {
  router: PoolRouter<Waiter>
  /** Period of the release that lets maxHoldMs expire when nothing else happens. */
  releaseEveryMs?: number
  /** A held request left the queue (for the hold-time histogram). */
  onHoldEnd?: (heldMs: number, outcome: HoldOutcome) => void
}

const defaultReleaseEveryMs = 50
const shutdownGraceMs = 1_000

/**
 * Late binding in this process: the router (shared/routing) decides what is held and when it
 * goes; this keeps each held request's handler waiting on a promise, lets it go when its
 * client leaves, releases periodically so that maxHoldMs expires on a quiet pool, and
 * answers everything held at shutdown.
 */
export class PoolAdmission {
  private readonly options: PoolAdmissionOptions
  private readonly timer: NodeJS.Timeout | null
  private live = 0
  private closed = false

  constructor(options: PoolAdmissionOptions) {
    this.options = options
    // Always on: a rule's hold (maxHoldMs) holds requests without late binding too, and
    // their deadlines must pass on a quiet pool. Nothing held, a release costs nothing.
    this.timer = setInterval(
      () => this.release(),
      options.releaseEveryMs ?? defaultReleaseEveryMs,
    ).unref()
  }

  /** Late binding is on for the pool. */
  get enabled(): boolean {
    return this.options.router.held.enabled
  }

  /** Requests held now whose clients are still there. */
  get held(): number {
    return this.live
  }

  /** Requests held at least once since the start. */
  get heldTotal(): number {
    return this.options.router.held.total
  }

  /**
   * Offers the request to the router: dispatched now, or once its best pod can start it.
   * Resolves with the route (pod null when there is none), or null when the client left
   * while held; rejects when the scorer shuts down first.
   */
  async admit(lookup: PoolLookup, options: AdmitOptions): Promise<Admitted | null> {
    if (this.closed) throw shuttingDown()
    if (options.signal.aborted) return null
    let resolve: (admitted: Admitted | null) => void = () => {}
    const waiter: Waiter = {
      reject: () => {},
      answered: options.answered,
      settled: false,
      released: (route, _nowMs, heldMs) => {
        if (waiter.settled) return
        waiter.settled = true
        this.live--
        this.options.onHoldEnd?.(heldMs, 'dispatched')
        resolve({ route, heldMs })
      },
    }
    const held = new Promise<Admitted | null>((settle, reject) => {
      resolve = settle
      waiter.reject = reject
    })
    waiter.expired = (_nowMs, heldMs) => {
      if (waiter.settled) return
      waiter.settled = true
      this.live--
      this.options.onHoldEnd?.(heldMs, 'expired')
      waiter.reject(heldTooLong(heldMs))
    }
    const offer = this.options.router.offer(
      lookup,
      waiter,
      performance.now(),
      options.route,
      options.terms,
    )
    if (offer.kind === 'routed') return { route: offer.route, heldMs: 0 }
    this.live++
    options.signal.addEventListener(
      'abort',
      () => {
        if (waiter.settled || !this.options.router.held.remove(offer.ticket)) return
        waiter.settled = true
        this.live--
        this.options.onHoldEnd?.(performance.now() - offer.ticket.sinceMs, 'client-gone')
        resolve(null)
      },
      { once: true },
    )
    return held
  }

  /** Routes the held requests again (the router does on its own events; this is the timer's). */
  release(): void {
    if (!this.closed) this.options.router.release(performance.now())
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
    for (const { payload: waiter, sinceMs } of this.options.router.held.drain()) {
      if (waiter.settled) continue
      waiter.settled = true
      this.live--
      this.options.onHoldEnd?.(now - sinceMs, 'shutdown')
      waiter.reject(error)
      answered.push(waiter.answered())
    }
    if (answered.length === 0) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled(answered),
      new Promise((done) => {
        timer = setTimeout(done, shutdownGraceMs).unref()
      }),
    ])
    clearTimeout(timer)
  }
}

function shuttingDown(): KinfError {
  return new KinfError('upstream_unavailable', 'the scorer is shutting down; retry elsewhere')
}

/** A request held past its rule's hold: no pod could start it within its objective. */
export function heldTooLong(heldMs: number): KinfError {
  return new KinfError(
    'rate_limited',
    `No pod could start this request within its time-to-first-token objective (held ${Math.round(heldMs)} ms); retry later.`,
    { retryAfterSeconds: 1, openAiCode: 'slo_unattainable' },
  )
}

/** Whether `error` is the answer to a request held to the end of its rule's hold. */
export function isHeldTooLong(error: unknown): boolean {
  return KinfError.isInstance(error) && error.openAiCode === 'slo_unattainable'
}
