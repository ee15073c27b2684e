import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { ScorerBackends } from '../scorer-config.ts'
import type { PoolRuntime } from './pool-runtime.ts'

/** The pools a request is served by, and the backends that point at them. */
export interface PoolView {
  readonly pools: readonly PoolRuntime[]
  readonly backends: ScorerBackends
}

/** A request's view, held until it is answered: its runtimes are not closed before. */
export interface PoolLease extends PoolView {
  release(): void
}

/**
 * The pool runtimes serving new requests, and those replaced by a new config that still
 * serve the requests that started on them: a request leases the view of its start, and
 * a replaced runtime is closed once no lease holds it (or at a deadline).
 */
export class LivePools {
  private view: PoolView
  /** Each draining runtime: closed once `done` settles; `cut` closes it now. */
  private readonly retiring = new Map<PoolRuntime, { done: Promise<void>; cut: () => void }>()
  private readonly log: (message: string) => void

  constructor(view: PoolView, log: (message: string) => void) {
    this.view = view
    this.log = log
  }

  get current(): PoolView {
    return this.view
  }

  /** Runtimes replaced, still finishing their requests. */
  get draining(): PoolRuntime[] {
    return [...this.retiring.keys()]
  }

  /** Every runtime that may route a request: the current ones and the draining ones. */
  all(): PoolRuntime[] {
    return [...this.view.pools, ...this.retiring.keys()]
  }

  lease(): PoolLease {
    const view = this.view
    for (const pool of view.pools) pool.usage.enter()
    let released = false
    return {
      ...view,
      release: () => {
        if (released) return
        released = true
        for (const pool of view.pools) pool.usage.leave()
      },
    }
  }

  /**
   * New requests get `next`; each runtime of `retired` is closed once the requests that
   * may use it are done, or after `drainMs` (what it still holds then gets an error).
   */
  replace(next: PoolView, retired: readonly PoolRuntime[], drainMs: number): void {
    this.view = next
    for (const runtime of retired) this.retire(runtime, drainMs)
  }

  /** Shutdown: every runtime closed, held requests answered with an error first. */
  async close(): Promise<void> {
    const runtimes = this.all()
    this.view = { pools: [], backends: {} }
    const draining = [...this.retiring.values()]
    for (const { cut } of draining) cut()
    await Promise.all(runtimes.map((runtime) => runtime.admission.close()))
    for (const runtime of runtimes) await runtime.close()
    await Promise.all(draining.map(({ done }) => done))
  }

  private retire(runtime: PoolRuntime, drainMs: number): void {
    let cut = () => {}
    const deadline = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainMs).unref()
      cut = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    const done = Promise.race([runtime.usage.idle(), deadline])
      .then(() => {
        cut()
        if (runtime.usage.count > 0)
          this.log(`pool ${runtime.id}: ${runtime.usage.count} requests still on the old config`)
        return runtime.close(
          new KinfError('upstream_unavailable', `pool ${runtime.id} was reconfigured; retry`),
        )
      })
      .catch((error: unknown) =>
        this.log(`closing pool ${runtime.id}: ${(error as Error).message}`),
      )
      .finally(() => this.retiring.delete(runtime))
    this.retiring.set(runtime, { done, cut })
  }
}
