/** One served request's time at the pod, in wall-clock milliseconds (not modelled time). */
export interface RequestTiming {
  requestId: string
  /** From the request's arrival at the pod's HTTP server to its first token (a stream writes it at once). */
  ttftMs: number
}

/**
 * The pod's own wall-clock time to first token per request, kept until taken (at most
 * `limit`, the oldest dropped first), so a load test can subtract it from what its
 * clients saw and tell the latency the stack in front adds. Streams send their headers
 * before the first token, so a header cannot carry it.
 */
export interface RequestTimings {
  record(timing: RequestTiming): void
  /** Everything recorded since the last take, and forgets it. */
  take(): RequestTiming[]
}

export function createRequestTimings(limit = 100_000): RequestTimings {
  let kept: RequestTiming[] = []
  return {
    record(timing) {
      kept.push(timing)
      if (kept.length > limit) kept = kept.slice(-Math.floor(limit / 2))
    },
    take() {
      const taken = kept
      kept = []
      return taken
    },
  }
}
