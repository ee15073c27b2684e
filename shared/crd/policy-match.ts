import { z } from 'zod'
import { KinfError } from '../errors/kinf-error.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'

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

type MatchShape<Conditions extends ConditionRegistry> = {
  [Condition in Conditions[number] as Condition['key']]: Condition['schema']
}

/**
 * A rule's `match`: one optional field per condition of the registry, in its order. A
 * registry that names a field twice is a programming error, caught when it is built.
 */
export function ruleMatchSchema<const Conditions extends ConditionRegistry>(
  conditions: Conditions,
) {
  const shape = Object.fromEntries(conditions.map((condition) => [condition.key, condition.schema]))
  if (Object.keys(shape).length !== conditions.length) {
    const keys = conditions.map((condition) => condition.key)
    const twice = keys.filter((key, position) => keys.indexOf(key) !== position)
    throw new KinfError('internal', `policy conditions registered twice: ${twice.join(', ')}`)
  }
  return z
    .strictObject(shape as MatchShape<Conditions>)
    .describe('What a request must satisfy for the rule to fire; every given condition must hold.')
}

/** A parsed `match` of a rule under the given registry. */
export type RuleMatchOf<Conditions extends ConditionRegistry> = z.output<
  ReturnType<typeof ruleMatchSchema<Conditions>>
>
