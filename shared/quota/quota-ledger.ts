import { KinfError } from '../errors/kinf-error.ts'
import type { QuotaAdmission, QuotaLimits } from './quota-store.ts'
import type { QuotaBuckets, TokenBucket } from './token-bucket.ts'

export type BucketAdmission =
  | { admitted: true; buckets: QuotaBuckets }
  | Extract<QuotaAdmission, { admitted: false }>

type LimitName = 'requests' | 'tokens'

const limitField = { requests: 'requestsPerMinute', tokens: 'tokensPerMinute' } as const

/** The bucket refilled up to `nowMs` (a clock that went backwards refills nothing). */
export function refillBucket(
  bucket: TokenBucket | undefined,
  capacity: number,
  nowMs: number,
): TokenBucket {
  if (bucket === undefined) return { level: capacity, updatedMs: nowMs }
  const elapsed = Math.max(0, nowMs - bucket.updatedMs)
  return {
    level: Math.min(capacity, bucket.level + (elapsed * capacity) / 60_000),
    updatedMs: Math.max(nowMs, bucket.updatedMs),
  }
}

/**
 * Milliseconds until `bucket` can give `need`. A need above capacity is granted as soon as
 * the bucket is full (it then goes into debt), so an oversized request is not refused forever.
 */
function waitMs(bucket: TokenBucket, capacity: number, need: number): number {
  const target = Math.min(need, capacity)
  if (bucket.level >= target) return 0
  return ((target - bucket.level) * 60_000) / capacity
}

/** Token counts are non-negative integers; anything else is a caller's bug, reported clearly. */
export function checkQuotaCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new KinfError('invalid_request', `quota: ${name} must be a non-negative integer`)
  }
}

export function checkQuotaClock(nowMs: number): void {
  if (!Number.isFinite(nowMs)) throw new KinfError('invalid_request', 'quota: bad clock reading')
}

/**
 * Admits one request of `estimatedTokens` (prompt + max_tokens): reserves 1 request and the
 * estimate when both buckets allow it, or says when to retry. No limits, always admitted.
 */
export function admitBuckets(
  buckets: QuotaBuckets,
  limits: QuotaLimits,
  estimatedTokens: number,
  nowMs: number,
): BucketAdmission {
  checkQuotaCount('estimatedTokens', estimatedTokens)
  checkQuotaClock(nowMs)
  const next: QuotaBuckets = {}
  let worst: { name: LimitName; wait: number; need: number; capacity: number } | undefined
  for (const name of ['requests', 'tokens'] as const) {
    const capacity = limits[limitField[name]]
    if (capacity === undefined) continue
    const need = name === 'requests' ? 1 : estimatedTokens
    const bucket = refillBucket(buckets[name], capacity, nowMs)
    const wait = waitMs(bucket, capacity, need)
    if (wait > 0 && (worst === undefined || wait > worst.wait)) {
      worst = { name, wait, need, capacity }
    }
    next[name] = { level: bucket.level - need, updatedMs: bucket.updatedMs }
  }
  if (worst === undefined) return { admitted: true, buckets: next }
  return quotaRefusal(worst.name, worst.wait, worst.need, worst.capacity)
}

/**
 * The refusal for a request that must wait `waitMs` for the `limit` bucket (of `capacity`)
 * to give `need`: Retry-After rounded up, at least 1 s. Stores that compute the wait
 * elsewhere (Redis Lua) build their answer here too.
 */
export function quotaRefusal(
  limit: LimitName,
  waitMs: number,
  need: number,
  capacity: number,
): Extract<QuotaAdmission, { admitted: false }> {
  const retry = Math.max(1, Math.ceil(waitMs / 1_000))
  let message: string
  if (limit === 'requests') {
    message = `quota exceeded: ${capacity} requests per minute; retry in ${retry} s`
  } else if (need > capacity) {
    message = `this request's ${need} tokens exceed the quota of ${capacity} tokens per minute: it is admitted only when the quota is unused; retry in ${retry} s`
  } else {
    message = `quota exceeded: ${capacity} tokens per minute (this request needs ${need}); retry in ${retry} s`
  }
  return { admitted: false, retryAfterSeconds: retry, limit, message }
}

/**
 * Corrects the tokens bucket once usage is known: refunds `estimate - actual`, or charges
 * the excess as debt. Never fills the bucket above capacity.
 */
export function settleBuckets(
  buckets: QuotaBuckets,
  limits: QuotaLimits,
  estimatedTokens: number,
  actualTokens: number,
  nowMs: number,
): QuotaBuckets {
  checkQuotaCount('estimatedTokens', estimatedTokens)
  checkQuotaCount('actualTokens', actualTokens)
  checkQuotaClock(nowMs)
  const next: QuotaBuckets = { ...buckets }
  const capacity = limits.tokensPerMinute
  if (capacity === undefined) {
    delete next.tokens
    return next
  }
  const bucket = refillBucket(buckets.tokens, capacity, nowMs)
  next.tokens = {
    level: Math.min(capacity, bucket.level - (actualTokens - estimatedTokens)),
    updatedMs: bucket.updatedMs,
  }
  return next
}

/**
 * Milliseconds after `nowMs` when every bucket is full again: from then on the state equals
 * a fresh one and may be forgotten (Redis TTL, memory pruning).
 */
export function msUntilFull(buckets: QuotaBuckets, limits: QuotaLimits, nowMs: number): number {
  let longest = 0
  for (const name of ['requests', 'tokens'] as const) {
    const capacity = limits[limitField[name]]
    const bucket = buckets[name]
    if (capacity === undefined || bucket === undefined) continue
    longest = Math.max(longest, waitMs(refillBucket(bucket, capacity, nowMs), capacity, capacity))
  }
  return Math.ceil(longest)
}
