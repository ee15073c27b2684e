/**
 * A token bucket: `level` units available (negative = debt), as of `updatedMs`. Capacity is
 * the per-minute limit and it refills continuously at limit/60 per second.
 */
export interface TokenBucket {
  level: number
  updatedMs: number
}

/** A tenant's accounting state: plain data, so stores can serialize it anywhere. */
export interface QuotaBuckets {
  requests?: TokenBucket
  tokens?: TokenBucket
}
