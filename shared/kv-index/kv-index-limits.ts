import { z } from 'zod'

/** A whole number of at least `min`; the message reads after the option's name. */
export function wholeNumber(min: 0 | 1) {
  const error = min === 1 ? 'must be a positive integer' : 'must be a non-negative integer'
  return z.int({ error }).min(min, { error })
}

/**
 * The limits both KvIndex implementations share, defaults included. Each bounds memory
 * (or Redis) under any input: lost BlockRemoved events, a pod that floods stores,
 * speculation that is never confirmed. What happens past a limit is up to the index.
 */
export const KvIndexLimits = z.strictObject({
  maxEngineHashesPerPod: wholeNumber(1)
    .default(262_144)
    .describe(
      'Engine hashes per pod; a pod holds its GPU block count (~5,900 in the L40S profile)',
    ),
  maxSpeculative: wholeNumber(1).default(262_144).describe('Speculative entries over all pods'),
  purgePerLookup: wholeNumber(0)
    .default(32)
    .describe('Expired speculative entries purged per lookup: bounded work per call'),
})
export type KvIndexLimits = z.infer<typeof KvIndexLimits>
