/**
 * Requests per ms, as an exponentially decaying count over `windowMs`, corrected for the
 * time observed so far: a burst in the first second reads as the burst it is, not as a
 * trickle averaged over a whole window that has not happened yet.
 */
export function createArrivalRate(windowMs: number) {
  let decayed = 0
  let first: number | null = null
  let last = 0
  const decayTo = (nowMs: number) => {
    if (nowMs > last) {
      decayed *= Math.exp(-(nowMs - last) / windowMs)
      last = nowMs
    }
  }
  return {
    /** A request was sent (routing again a held one is not an arrival). */
    count(nowMs: number): void {
      first ??= nowMs
      decayTo(nowMs)
      decayed += 1
    },
    rate(nowMs: number): number {
      if (first === null) return 0
      decayTo(nowMs)
      // The weight the window has had time to accumulate; at least one ms of history.
      const seen = Math.max(1, last - first)
      return decayed / (windowMs * (1 - Math.exp(-seen / windowMs)))
    },
  }
}
