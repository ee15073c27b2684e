import type { BenchmarkRun, RequestRecord } from '../../control-plane/lab/bench/request-record.ts'

export interface TimedRunSpec {
  /** How reports name the load, e.g. poisson@1 or concurrent@8. */
  profile?: string
  count: number
  /** Between consecutive starts (default 1 s). */
  gapMs?: number
  ttftMs?: (i: number) => number
  e2eMs: (i: number) => number
  failed?: (i: number) => boolean
}

/**
 * A benchmark run of `count` requests started `gapMs` apart, the i-th with the given TTFT
 * and e2e latency (and failed where `failed` says): records shaped for what the bench
 * report code reads from them, nothing simulated.
 */
export function timedBenchRun(spec: TimedRunSpec): BenchmarkRun {
  const gap = spec.gapMs ?? 1000
  const records: RequestRecord[] = Array.from({ length: spec.count }, (_, i) => ({
    id: `r${i}`,
    conversation: i,
    turn: 0,
    startMs: i * gap,
    firstTokenMs: i * gap + (spec.ttftMs?.(i) ?? 100),
    tokenTimesMs: [],
    endMs: i * gap + spec.e2eMs(i),
    promptTokens: 10,
    outputTokens: 1,
    cachedTokens: 0,
    pod: null,
    error: spec.failed?.(i) ? 'boom' : null,
  }))
  return {
    config: {
      mode: 'des',
      router: 'round-robin',
      workload: 'w',
      profile: spec.profile ?? 'poisson@1',
      rate: 1,
      pods: 3,
      gpuProfile: 'l40s-27b-fp8',
      seed: 1,
      dataSpec: '',
    },
    startMs: 0,
    endMs: Math.max(0, ...records.map((r) => r.endMs)),
    records,
    prefixCache: null,
    elapsedSeconds: 0,
  }
}
