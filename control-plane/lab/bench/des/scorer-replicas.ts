import type { HeldPayload, PoolRouter } from '../../../../shared/routing/pool-router.ts'

/**
 * The scorer's replicas in the DES: each its own PoolRouter (its own in-flight accounting,
 * TTFT fit, strategy state and metrics scrapes) over the one shared KV index, as replicas
 * sharing Redis run. A Kubernetes Service spreads requests over them: kube-proxy picks a
 * backend at random per connection, here per request. A request's later calls (first
 * token, progress, end) go to the replica that routed it.
 */
export class ScorerReplicas<T extends HeldPayload> {
  private readonly replicas: PoolRouter<T>[]
  private readonly byRequest = new Map<string, PoolRouter<T>>()
  private readonly random: () => number

  constructor(replicas: PoolRouter<T>[], random: () => number) {
    if (replicas.length === 0) throw new Error('at least one scorer replica')
    this.replicas = replicas
    this.random = random
  }

  get all(): readonly PoolRouter<T>[] {
    return this.replicas
  }

  /** The replica that takes request `id` (one replica draws nothing, so a run is as before). */
  assign(id: string): PoolRouter<T> {
    const replica =
      this.replicas.length === 1
        ? (this.replicas[0] as PoolRouter<T>)
        : (this.replicas[Math.floor(this.random() * this.replicas.length)] as PoolRouter<T>)
    this.byRequest.set(id, replica)
    return replica
  }

  /** The replica that routed `id`. */
  of(id: string): PoolRouter<T> | undefined {
    return this.byRequest.get(id)
  }

  /** The request ended: forget which replica had it. */
  release(id: string): void {
    this.byRequest.delete(id)
  }
}
