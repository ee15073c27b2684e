import { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'
import type { IndexTrust } from './routing-strategy.ts'

export const IndexTrustOptions = z.strictObject({
  tolerance: z
    .number({ error: 'must be a number >= 0' })
    .min(0, { error: 'must be a number >= 0' })
    .describe(
      'Mean relative error between predicted and reported cached tokens tolerated as precise',
    ),
  minObservations: z
    .int({ error: 'must be a positive integer' })
    .min(1, { error: 'must be a positive integer' })
    .default(5)
    .describe('Observations before a pod can be demoted, so one odd request does not'),
  alpha: z
    .number({ error: 'must be in (0, 1]' })
    .gt(0, { error: 'must be in (0, 1]' })
    .max(1, { error: 'must be in (0, 1]' })
    .default(0.2)
    .describe('Weight of the newest observation in the moving average'),
})
export type IndexTrustOptions = z.infer<typeof IndexTrustOptions>
export type IndexTrustOptionsInput = z.input<typeof IndexTrustOptions>

/**
 * Verified index accuracy: after each request, the cached tokens the index predicted are
 * compared with the cached_tokens the pod reported. The moving average of the relative
 * error ("drift") demotes a pod precise → approximate (cache hits discounted) → load-only
 * (index ignored), and promotes it back with hysteresis when it agrees again. This catches
 * the stale-index family of bugs (missed removals, salt or LoRA mismatches, a restart the
 * router did not see) as they happen instead of after an incident.
 */
export class IndexTrustTracker {
  private readonly tolerance: number
  private readonly minObservations: number
  private readonly alpha: number
  drift = 0
  observations = 0
  trust: IndexTrust = 'precise'

  constructor(input: IndexTrustOptionsInput) {
    const options = parseOptions(IndexTrustOptions, input, 'index trust')
    this.tolerance = options.tolerance
    this.minObservations = options.minObservations
    this.alpha = options.alpha
  }

  /** How much of the index's predicted hit to believe when scoring. */
  get confidence(): number {
    if (this.trust === 'precise') return 1
    if (this.trust === 'load-only') return 0
    return Math.max(0, 1 - this.drift)
  }

  observe(predictedCachedTokens: number, reportedCachedTokens: number, promptTokens: number): void {
    const error = Math.abs(predictedCachedTokens - reportedCachedTokens) / Math.max(1, promptTokens)
    this.drift =
      this.observations === 0 ? error : this.alpha * error + (1 - this.alpha) * this.drift
    this.observations++
    if (this.observations < this.minObservations) return
    const t = this.tolerance
    if (this.trust === 'precise' && this.drift > t) this.trust = 'approximate'
    else if (this.trust === 'approximate' && this.drift > 2 * t) this.trust = 'load-only'
    else if (this.trust === 'load-only' && this.drift < t) this.trust = 'approximate'
    else if (this.trust === 'approximate' && this.drift < t / 2) this.trust = 'precise'
  }

  /** The state another tracker reported (an inspector replaying a replica's view). */
  restore(state: { trust: IndexTrust; drift: number; observations: number }): void {
    this.trust = state.trust
    this.drift = state.drift
    this.observations = state.observations
  }

  /** A fresh start (the pod restarted, its index was rebuilt). */
  reset(): void {
    this.drift = 0
    this.observations = 0
    this.trust = 'precise'
  }
}
