/**
 * The nonces of the signed requests this scorer accepted, each until its signature expires
 * (maxSkewSeconds after its timestamp): one seen again is a replay. Bounded: at the bound
 * new requests are refused rather than remembered less, since forgetting a nonce early
 * would let its replay through.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>()
  private readonly limit: number

  constructor(limit = 1_000_000) {
    this.limit = limit
  }

  /**
   * Remembers `nonce`: 'admitted'; 'replayed' when it was seen (the request is a replay);
   * 'full' at the bound (the caller answers 503).
   */
  admit(
    nonce: string,
    expiresAtSeconds: number,
    nowSeconds: number,
  ): 'admitted' | 'replayed' | 'full' {
    this.forgetExpired(nowSeconds)
    if (this.seen.has(nonce)) return 'replayed'
    if (this.seen.size >= this.limit) return 'full'
    this.seen.set(nonce, expiresAtSeconds)
    return 'admitted'
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
