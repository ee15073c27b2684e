import { KinfError } from '../../shared/errors/kinf-error.ts'

/**
 * The nonces of the signed requests this scorer accepted, each until its signature expires
 * (maxSkewSeconds after its timestamp): one seen again is a replay. Bounded: at the bound
 * new requests are refused (503) rather than remembered less, since forgetting a nonce
 * early would let its replay through.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>()
  private readonly limit: number

  constructor(limit = 1_000_000) {
    this.limit = limit
  }

  /** Remembers `nonce`, or throws unauthorized when it was seen (a replayed request). */
  admit(nonce: string, expiresAtSeconds: number, nowSeconds: number): void {
    this.forgetExpired(nowSeconds)
    if (this.seen.has(nonce))
      throw new KinfError('unauthorized', 'request not signed by the edge: replayed nonce')
    if (this.seen.size >= this.limit)
      throw new KinfError('upstream_unavailable', 'too many signed requests in flight to check')
    this.seen.set(nonce, expiresAtSeconds)
  }

  get size(): number {
    return this.seen.size
  }

  /** Expiries grow with arrival (timestamps within the skew), so the oldest come first. */
  private forgetExpired(nowSeconds: number): void {
    for (const [nonce, expires] of this.seen) {
      if (expires >= nowSeconds) return
      this.seen.delete(nonce)
    }
  }
}
