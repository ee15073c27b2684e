import { z } from 'zod'
import { ModelName } from './inference-pool.ts'
import { ResourceName } from './object-meta.ts'

/** A request label: `pii`, `pii:card`, `batch`, `complexity:simple`. */
export const RequestLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(
    /^[a-z0-9]([a-z0-9._-]*[a-z0-9])?(:[a-z0-9]([a-z0-9._-]*[a-z0-9])?)?$/,
    'must be lower-case words, optionally qualified as group:name (e.g. pii:card)',
  )
export type RequestLabel = z.infer<typeof RequestLabel>

/** An inclusive numeric range; either end may be open. */
export function range(what: string, number: z.ZodNumber) {
  return z
    .strictObject({
      min: number.optional().describe(`Smallest ${what} that matches (inclusive).`),
      max: number.optional().describe(`Largest ${what} that matches (inclusive).`),
    })
    .superRefine((r, ctx) => {
      if (r.min !== undefined && r.max !== undefined && r.min > r.max) {
        ctx.addIssue({
          code: 'custom',
          path: ['max'],
          message: `max ${r.max} is below min ${r.min}`,
        })
      }
    })
    .meta({
      'x-kubernetes-validations': [
        {
          rule: '!has(self.min) || !has(self.max) || self.min <= self.max',
          message: 'min must not exceed max',
        },
      ],
    })
    .describe(`Range of ${what}.`)
}
export type Range = { min?: number | undefined; max?: number | undefined }

const labelList = z.array(RequestLabel).min(1).max(32)

export const LabelMatch = z
  .strictObject({
    all: labelList.optional().describe('The request carries every one of these labels.'),
    any: labelList.optional().describe('The request carries at least one of these labels.'),
    none: labelList.optional().describe('The request carries none of these labels.'),
  })
  .describe(
    'Labels come from the PII detectors (pii, pii:card, ...) and the client’s labels header.',
  )
export type LabelMatch = z.infer<typeof LabelMatch>

export const PoolStatusMatch = z
  .strictObject({
    name: ResourceName.describe('The InferencePool whose live status is tested.'),
    saturated: z
      .boolean()
      .optional()
      .describe('true: matches only while the pool is saturated; false: only while it is not.'),
    saturation: range('saturation (0 idle, 1 saturated)', z.number().min(0)).optional(),
    predictedTtftMs: range('predicted TTFT of the best pod, in ms', z.number().min(0)).optional(),
  })
  .describe('Matches on the pool’s live status as the scorer reports it.')
export type PoolStatusMatch = z.infer<typeof PoolStatusMatch>

export const RuleMatch = z
  .strictObject({
    tenants: z
      .array(ResourceName)
      .min(1)
      .max(64)
      .optional()
      .describe('Tenants of this policy the rule applies to; all when omitted.'),
    models: z
      .array(ModelName)
      .min(1)
      .max(64)
      .optional()
      .describe('Requested model names; all when omitted.'),
    promptTokens: range('prompt length, in tokens', z.int().min(0)).optional(),
    labels: LabelMatch.optional(),
    pool: PoolStatusMatch.optional(),
  })
  .describe('What a request must satisfy for the rule to fire; every given condition must hold.')
export type RuleMatch = z.infer<typeof RuleMatch>
