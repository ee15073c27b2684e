import { z } from 'zod'

/**
 * A list of items keyed by `name`: unique names are checked here (with the duplicate's
 * path, so kinfctl can point at its line) and by the API server through list-type map.
 */
export function namedList<Item extends z.ZodType<{ name: string }>>(
  item: Item,
  limits: { min?: number; max: number },
) {
  return z
    .array(item)
    .min(limits.min ?? 0)
    .max(limits.max)
    .superRefine((items, ctx) => {
      const seen = new Set<string>()
      items.forEach((entry, index) => {
        if (seen.has(entry.name)) {
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `duplicate name "${entry.name}"`,
          })
        }
        seen.add(entry.name)
      })
    })
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
}

/**
 * Tagged union as Kubernetes APIs write it: an object with several optional members of
 * which exactly one (or at most one) is set. Checked in zod and, for the API server, by
 * a CEL rule that uses only core CEL.
 */
export function exactlyOneOf<Shape extends z.ZodRawShape>(
  shape: Shape,
  options: { atMostOne?: boolean } = {},
) {
  const keys = Object.keys(shape)
  const quantity = options.atMostOne ? 'at most one' : 'exactly one'
  const message = `${quantity} of ${keys.join(', ')} must be set`
  const count = keys.map((key) => `(has(self.${key}) ? 1 : 0)`).join(' + ')
  const rule = options.atMostOne ? `${count} <= 1` : `${count} == 1`
  return z
    .strictObject(shape)
    .superRefine((value, ctx) => {
      const set = keys.filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      if (set.length > 1 || (set.length === 0 && !options.atMostOne)) {
        ctx.addIssue({
          code: 'custom',
          path: set.length > 1 ? [set[1] as string] : [],
          message: set.length > 1 ? `${message}, found ${set.join(' and ')}` : message,
        })
      }
    })
    .meta({ 'x-kubernetes-validations': [{ rule, message }] })
}
