/**
 * Failed authentications counted per source (a client address, a key id) in fixed
 * windows: past `maxFailures` in one, the source is refused until the window ends. Pure:
 * the clock is passed in; bounded: past `maxTracked` sources the oldest window is dropped.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, { startMs: number; failures: number }>()
  private readonly options: { maxFailures: number; windowMs: number; maxTracked: number }

  constructor(options: { maxFailures: number; windowMs: number; maxTracked: number }) {
    this.options = options
  }

  /** Seconds until `source` may try again, or null when it may now. */
  blocked(source: string, nowMs: number): number | null {
    const window = this.current(source, nowMs)
    if (!window || window.failures < this.options.maxFailures) return null
    return Math.max(1, Math.ceil((window.startMs + this.options.windowMs - nowMs) / 1000))
  }

  /** Counts a failure of `source`; the seconds it must wait when that crossed the limit. */
  failed(source: string, nowMs: number): number | null {
    let window = this.current(source, nowMs)
    if (!window) {
      window = { startMs: nowMs, failures: 0 }
      this.windows.delete(source)
      this.windows.set(source, window)
      this.trim()
    }
    window.failures++
    return this.blocked(source, nowMs)
  }

  private current(source: string, nowMs: number) {
    const window = this.windows.get(source)
    if (!window || nowMs >= window.startMs + this.options.windowMs) return null
    return window
  }

  /** Insertion order is window order: the first entries are the oldest. */
  private trim(): void {
    while (this.windows.size > this.options.maxTracked) {
      const oldest = this.windows.keys().next()
      if (oldest.done) return
      this.windows.delete(oldest.value)
    }
  }
}
