import { refillBucket } from '../quota/quota-ledger.ts'
import type { QuotaLimits } from '../quota/quota-store.ts'
import type { QuotaBuckets } from '../quota/token-bucket.ts'

/** A limit the request met: its bucket was short by this much, for this long. */
export interface RateLimitRefusal {
  limit: 'requests' | 'tokens'
  retryAfterSeconds: number
}

const limits = [
  { name: 'requests', field: 'requestsPerMinute' },
  { name: 'tokens', field: 'tokensPerMinute' },
] as const

/**
 * OpenAI's rate-limit headers for a tenant's quotas (docs/edge-keys-and-errors.md §1.8):
 * for each limit the policy sets, x-ratelimit-limit-<name> (per minute),
 * x-ratelimit-remaining-<name> (what its bucket holds now, after this request) and
 * x-ratelimit-reset-<name> (how long until the bucket is full again, as OpenAI writes
 * durations: "1s", "6m0s", "250ms"). `buckets` is the ledger's state as read after
 * admission; null when the store cannot be read, when only the limits and, for the limit
 * a refused request met, remaining 0 and its Retry-After, are known.
 */
export function rateLimitHeaders(
  quotas: QuotaLimits,
  buckets: QuotaBuckets | null,
  nowMs: number,
  refusal: RateLimitRefusal | null = null,
): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const { name, field } of limits) {
    const capacity = quotas[field]
    if (capacity === undefined) continue
    headers[`x-ratelimit-limit-${name}`] = String(capacity)
    if (buckets === null && refusal?.limit !== name) continue
    const refused = buckets === null && refusal !== null
    const bucket = refillBucket(buckets?.[name], capacity, nowMs)
    const remaining = refused ? 0 : Math.max(0, Math.floor(bucket.level))
    const resetMs = refused
      ? refusal.retryAfterSeconds * 1_000
      : ((capacity - Math.min(capacity, bucket.level)) * 60_000) / capacity
    headers[`x-ratelimit-remaining-${name}`] = String(remaining)
    headers[`x-ratelimit-reset-${name}`] = openAiDuration(resetMs)
  }
  return headers
}

/**
 * A duration as OpenAI's headers write it (Go's time.Duration form): "0s", "250ms", "1s",
 * "6m0s", "1h2m3s"; from a second on, rounded up to whole seconds.
 */
export function openAiDuration(ms: number): string {
  if (!(ms > 0)) return '0s'
  if (ms < 1_000) return `${Math.ceil(ms)}ms`
  const total = Math.ceil(ms / 1_000)
  const hours = Math.floor(total / 3_600)
  const minutes = Math.floor((total % 3_600) / 60)
  const seconds = total % 60
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`
  if (minutes > 0) return `${minutes}m${seconds}s`
  return `${seconds}s`
}
