import { z } from 'zod'

export const RetryBudgetOptions = z.strictObject({
  percent: z
    .number()
    .min(0)
    .max(100)
    .default(20)
    .describe('Requests that may be retrying at once, as a share of those in flight'),
  minRetrying: z
    .int()
    .min(0)
    .default(3)
    .describe('Requests that may always be retrying at once, however few are in flight'),
})
export type RetryBudgetOptionsInput = z.input<typeof RetryBudgetOptions>

/**
 * How many calls may be retrying at once, as Envoy's retry budgets count it (20 % of the
 * requests in flight, at least 3): each call is bounded to its attempts anyway, and this
 * bounds them together, so a storm costs Bedrock about one call per request instead of
 * one per attempt, while a few failures among many successes are all retried.
 */
export class RetryBudget {
  private readonly percent: number
  private readonly minRetrying: number
  private inFlight = 0
  private retrying = new Set<object>()

  constructor(input: RetryBudgetOptionsInput = {}) {
    const options = RetryBudgetOptions.parse(input)
    this.percent = options.percent
    this.minRetrying = options.minRetrying
  }

  /** A call starts; the returned function ends it (and its retrying, if any). */
  begin(): { retry(): boolean; end(): void } {
    this.inFlight++
    const call = {}
    let ended = false
    return {
      retry: () => {
        if (this.retrying.has(call)) return true
        const allowed = Math.max(this.minRetrying, (this.inFlight * this.percent) / 100)
        if (this.retrying.size + 1 > allowed) return false
        this.retrying.add(call)
        return true
      },
      end: () => {
        if (ended) return
        ended = true
        this.inFlight--
        this.retrying.delete(call)
      },
    }
  }
}
