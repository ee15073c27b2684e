import { type CoordinationV1Api, type V1Lease, V1MicroTime } from '@kubernetes/client-node'
import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'

/** client-go's and controller-runtime's defaults. */
export const LeaseElectorOptions = z
  .strictObject({
    name: z.string().min(1).default('kinference-controller'),
    namespace: z.string().min(1),
    identity: z.string().min(1),
    leaseDurationMs: z.int().min(1_000).default(15_000),
    renewDeadlineMs: z.int().min(500).default(10_000),
    retryPeriodMs: z.int().min(100).default(2_000),
  })
  .refine(
    (o) => o.renewDeadlineMs < o.leaseDurationMs,
    'renew deadline must be below the lease duration',
  )
  .refine(
    (o) => o.retryPeriodMs < o.renewDeadlineMs,
    'retry period must be below the renew deadline',
  )
export type LeaseElectorOptionsInput = z.input<typeof LeaseElectorOptions>

export interface LeaseHooks {
  onStartedLeading: () => void
  onStoppedLeading: () => void
  onError: (message: string) => void
  nowMs: () => number
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: try every
 * retry period; take the lease when it is free or its holder has not renewed within its
 * duration (as seen on this clock since the renew time last changed); renew while
 * leading, and step down when renewing has failed for the renew deadline. Every write is
 * a create or a replace with the resourceVersion read, so two candidates cannot both win.
 */
export class LeaseElector {
  private readonly options: z.infer<typeof LeaseElectorOptions>
  private readonly api: CoordinationV1Api
  private readonly hooks: LeaseHooks
  private timer: ReturnType<typeof setTimeout> | null = null
  private leading = false
  private lastRenewMs = 0
  /** The other holder's renewTime as last seen, and when (on our clock) it was seen to change. */
  private observed: { holder: string; renew: string; atMs: number } | null = null
  private stopped = false
  private ticking: Promise<void> | null = null

  constructor(api: CoordinationV1Api, options: LeaseElectorOptionsInput, hooks: LeaseHooks) {
    this.api = api
    this.options = parseOptions(LeaseElectorOptions, options, 'leader election')
    this.hooks = hooks
  }

  get isLeader(): boolean {
    return this.leading
  }

  start(): void {
    void this.tick()
  }

  /**
   * Stops trying; a leader releases the lease so a follower takes over at once. A try in
   * flight is waited for first: its renewal would make the release's write conflict, and
   * one that took the lease just now must give it back too.
   */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.ticking
    this.setLeading(false)
    await this.release().catch((error: unknown) =>
      this.hooks.onError(`releasing the lease: ${(error as Error).message}`),
    )
  }

  private tick(): Promise<void> {
    this.ticking = this.tryOnce().finally(() => {
      this.ticking = null
    })
    return this.ticking
  }

  private async tryOnce(): Promise<void> {
    if (this.stopped) return
    try {
      const acquired = await this.tryAcquireOrRenew()
      if (acquired) this.lastRenewMs = this.hooks.nowMs()
      if (this.stopped) return
      this.setLeading(acquired)
    } catch (error) {
      this.hooks.onError(
        `lease ${this.options.namespace}/${this.options.name}: ${(error as Error).message}`,
      )
      if (this.leading && this.hooks.nowMs() - this.lastRenewMs >= this.options.renewDeadlineMs)
        this.setLeading(false)
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.options.retryPeriodMs)
  }

  private setLeading(leading: boolean) {
    if (leading === this.leading) return
    this.leading = leading
    if (leading) this.hooks.onStartedLeading()
    else this.hooks.onStoppedLeading()
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { name, namespace, identity } = this.options
    const lease = await this.read()
    const now = new V1MicroTime(this.hooks.nowMs())
    const durationSeconds = Math.ceil(this.options.leaseDurationMs / 1000)
    if (lease === null) {
      await this.api.createNamespacedLease({
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 0,
          },
        },
      })
      return true
    }
    const spec = lease.spec ?? {}
    const holder = spec.holderIdentity ?? ''
    if (holder !== identity && holder !== '' && !this.expired(holder, spec)) return false
    const taking = holder !== identity
    await this.api.replaceNamespacedLease({
      name,
      namespace,
      body: {
        ...lease,
        spec: {
          ...spec,
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          renewTime: now,
          ...(taking && { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
        },
      },
    })
    return true
  }

  /** Another holder's lease counts as expired when its renewTime has not moved for its duration. */
  private expired(holder: string, spec: NonNullable<V1Lease['spec']>): boolean {
    const renew = spec.renewTime ? new Date(spec.renewTime).toISOString() : ''
    const now = this.hooks.nowMs()
    if (!this.observed || this.observed.holder !== holder || this.observed.renew !== renew)
      this.observed = { holder, renew, atMs: now }
    const durationMs = (spec.leaseDurationSeconds ?? this.options.leaseDurationMs / 1000) * 1000
    return now - this.observed.atMs >= durationMs
  }

  private async read(): Promise<V1Lease | null> {
    try {
      return await this.api.readNamespacedLease({
        name: this.options.name,
        namespace: this.options.namespace,
      })
    } catch (error) {
      if ((error as { code?: number }).code === 404) return null
      throw error
    }
  }

  /** client-go's ReleaseOnCancel: an empty holder and a 1 s duration. */
  private async release(): Promise<void> {
    const lease = await this.read()
    if (!lease || lease.spec?.holderIdentity !== this.options.identity) return
    await this.api.replaceNamespacedLease({
      name: this.options.name,
      namespace: this.options.namespace,
      body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } },
    })
  }
}
