import { z } from 'zod'

/** Any IEEE double, NaN and ±Inf included: Prometheus sample values are all of them. */
const SampleValue = z.custom<number>((value) => typeof value === 'number', 'must be a number')

/** One line of a Prometheus text exposition. */
export const PrometheusSample = z.strictObject({
  name: z.string().regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/),
  /** Label names to unescaped values; a null-prototype object, so any label name is safe. */
  labels: z.record(z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/), z.string()),
  value: SampleValue,
  /** Milliseconds since the epoch, when the line carries one. */
  timestampMs: z.number().int().optional(),
})
export type PrometheusSample = z.infer<typeof PrometheusSample>

export const PrometheusMetricType = z.enum(['counter', 'gauge', 'histogram', 'summary', 'untyped'])
export type PrometheusMetricType = z.infer<typeof PrometheusMetricType>

/** A line that was not understood, or a limit that stopped the parse; 1-based line number. */
export const PrometheusParseIssue = z.strictObject({
  line: z.number().int().min(1),
  message: z.string(),
})
export type PrometheusParseIssue = z.infer<typeof PrometheusParseIssue>

export const PrometheusParseResult = z.strictObject({
  samples: z.array(PrometheusSample),
  /** From `# TYPE` lines, by metric family name. */
  types: z.map(z.string(), PrometheusMetricType),
  /** The first `maxErrors` issues, in line order. */
  errors: z.array(PrometheusParseIssue),
  /** Every issue found, including those beyond `maxErrors`. */
  errorCount: z.number().int().min(0),
  /** True when a limit (body length, sample count) stopped the parse before the end. */
  truncated: z.boolean(),
})
export type PrometheusParseResult = z.infer<typeof PrometheusParseResult>
