import { z } from 'zod'
import { parseOptions } from '../../../../shared/config/parse-options.ts'

const msError = 'must be a number of ms >= 0'
const ms = z.number({ error: msError }).min(0, { error: msError })

/**
 * The timing the DES models, defaults included. A plain object, not strict: it is read
 * out of the whole DesOptions, whose other fields are not its business.
 */
export const DesTimingOptions = z.object({
  eventDelayMs: ms
    .default(5)
    .describe('KV events reach the router this long after the step that produced them'),
  metricsIntervalMs: z
    .number({ error: 'must be a number of ms > 0' })
    .gt(0, { error: 'must be a number of ms > 0' })
    // GIE's refresh-metrics-interval (docs/peer-routers.md): the stronger peer default.
    .default(50)
    .describe('Metrics are scraped this often'),
  metricsDelayMs: ms
    .default(20)
    .describe('Scraped metrics are this old when the router reads them'),
  eventLossRate: z
    .number({ error: 'must be a fraction from 0 to 1' })
    .min(0, { error: 'must be a fraction from 0 to 1' })
    .max(1, { error: 'must be a fraction from 0 to 1' })
    .default(0)
    .describe(
      'Share of KV event batches the index never sees (the stale-index scenario: no replay repairs them here)',
    ),
  networkDelayMs: ms
    .default(0.5)
    .describe('One-way client–router–pod latency (the zero-queue floor adds it both ways)'),
})
export type DesTimingOptions = z.infer<typeof DesTimingOptions>
export type DesTimingOptionsInput = z.input<typeof DesTimingOptions>

/** The timing options, defaulted, or KinfError 'invalid_config' naming the bad one. */
export function parseDesTimingOptions(input: DesTimingOptionsInput): DesTimingOptions {
  return parseOptions(DesTimingOptions, input, 'des benchmark')
}
