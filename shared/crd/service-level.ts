import { z } from 'zod'

/** The request header a client may name its own TTFT objective in, where a rule allows it. */
export const sloTtftHeader = 'x-kinference-slo-ttft-ms'

/** The largest objective a rule or a header may give: ten minutes, the edge's own horizon. */
export const maxTtftObjectiveMs = 600_000

/** The largest time-per-output-token objective: a minute per token. */
export const maxTpotObjectiveMs = 60_000

/** What a rule does with a request no local pod is predicted to start within its objective. */
export const WhenUnattainable = z.enum(['Serve', 'Shed', 'Burst', 'BurstOrShed'])
export type WhenUnattainable = z.infer<typeof WhenUnattainable>

const whenUnattainableDoc =
  "What happens when the best local pod's predicted TTFT is above the request's objective. Serve (the default): served as the action decides, as if there were no objective. Shed: answered 429 slo_unattainable with Retry-After, the predicted TTFT minus the objective rounded up to whole seconds (at least 1). Burst: the burst action's external backends are tried first, local as a last resort; a request a locality constraint keeps in the cluster is served locally. BurstOrShed: as Burst, but a request kept in the cluster is shed instead. Burst and BurstOrShed need a burst action. Without a prediction (the scorer unreachable, the pool not served by it) the request is served as decided: an objective never refuses on a guess."

/**
 * A rule's service level: the TTFT objective of the requests it serves and what happens
 * when no local pod is predicted to meet it (shared/policy/apply-service-level.ts applies it).
 */
export const ServiceLevel = z
  .strictObject({
    ttftMs: z
      .int()
      .min(1)
      .max(maxTtftObjectiveMs)
      .describe(
        'Time-to-first-token objective, in milliseconds, of the requests this rule serves; the loosest a client header may ask for.',
      ),
    allowHeader: z
      .boolean()
      .default(false)
      .describe(
        `Whether a request's ${sloTtftHeader} header (a whole number of milliseconds) sets its objective, held between minTtftMs and ttftMs. Where it is not allowed the header is ignored. A value that is not a whole number from 1 to ${maxTtftObjectiveMs} is answered 400 whatever the rule.`,
      ),
    minTtftMs: z
      .int()
      .min(1)
      .max(maxTtftObjectiveMs)
      .default(100)
      .describe(
        `The tightest objective an ${sloTtftHeader} header may ask for; a smaller value counts as this. At most ttftMs.`,
      ),
    tpotMs: z
      .int()
      .min(1)
      .max(maxTpotObjectiveMs)
      .optional()
      .describe(
        "Time-per-output-token objective, in milliseconds: a request is also unattainable when the best local pod's predicted time per output token (its fitted decode step with this request and those waiting there in its batch) is above it. Unset: only the TTFT objective counts.",
      ),
    priority: z
      .int()
      .min(-100)
      .max(100)
      .default(0)
      .describe(
        'Priority band of the requests this rule serves, -100 to 100: a request the scorer holds is dispatched before every held request of a lower band; within a band, the tenant served the fewest tokens goes first (token-fair).',
      ),
    maxHoldMs: z
      .int()
      .min(0)
      .max(maxTtftObjectiveMs)
      .default(0)
      .describe(
        "How long the scorer may hold a request its best pod cannot start now, waiting in priority and token-fair order for a pod that will, within the objective (at most ttftMs). When the hold ends, whenUnattainable decides: Serve sends the request to its best pod, Shed answers 429 slo_unattainable, Burst and BurstOrShed send it to the burst action's external backends where it may leave (else 429). 0: requests are never held for the objective (the pool's late binding still may). The wait of the requests held before it counts in its predicted TTFT.",
      ),
    whenUnattainable: WhenUnattainable.default('Serve').describe(whenUnattainableDoc),
  })
  .superRefine((level, ctx) => {
    if (level.minTtftMs > level.ttftMs)
      ctx.addIssue({
        code: 'custom',
        path: ['minTtftMs'],
        message: `minTtftMs (${level.minTtftMs}) must be at most ttftMs (${level.ttftMs})`,
      })
    if (level.maxHoldMs > level.ttftMs)
      ctx.addIssue({
        code: 'custom',
        path: ['maxHoldMs'],
        message: `maxHoldMs (${level.maxHoldMs}) must be at most ttftMs (${level.ttftMs}): a request held longer has missed its objective`,
      })
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'self.minTtftMs <= self.ttftMs', message: 'minTtftMs must be at most ttftMs' },
      {
        rule: '!has(self.maxHoldMs) || self.maxHoldMs <= self.ttftMs',
        message: 'maxHoldMs must be at most ttftMs',
      },
    ],
  })
export type ServiceLevel = z.infer<typeof ServiceLevel>

/** Whether a service level sends what it cannot serve in time outside the cluster. */
export function burstsWhenUnattainable(level: ServiceLevel | undefined): boolean {
  return level?.whenUnattainable === 'Burst' || level?.whenUnattainable === 'BurstOrShed'
}
