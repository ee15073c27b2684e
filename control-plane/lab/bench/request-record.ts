/** One request as a benchmark client saw it; times in ms on the benchmark's clock. */
export interface RequestRecord {
  id: string
  /** Conversation and turn (multi-turn workloads; 0 otherwise). */
  conversation: number
  turn: number
  /** When the client sent it (GuideLLM's request_start: just before the POST). */
  startMs: number
  /** First chunk carrying at least one token; null when none arrived. */
  firstTokenMs: number | null
  /** Every token's arrival (for ITL); the first equals firstTokenMs. */
  tokenTimesMs: number[]
  endMs: number
  promptTokens: number
  outputTokens: number
  /** usage.prompt_tokens_details.cached_tokens as the pod reported it (0 when absent). */
  cachedTokens: number
  /** Which pod served it, when the router said (decision header or the DES). */
  pod: string | null
  /** null on success. */
  error: string | null
  /** Whose request it was, where the run has tenants (DES admission runs). */
  tenant?: string
}

/** What one benchmark (one router, one workload, one rate) produced. */
export interface BenchmarkRun {
  config: {
    mode: 'des' | 'live'
    router: string
    workload: string
    profile: string
    /** Requests/s for constant and poisson, streams for concurrent, null otherwise. */
    rate: number | null
    pods: number
    gpuProfile: string
    seed: number
    dataSpec: string
    /** Scorer replicas (DES), when more than one. */
    replicas?: number
  }
  /** Measured window: first request sent to last request finished. */
  startMs: number
  endMs: number
  records: RequestRecord[]
  /** The pods' own prefix-cache counters over the run (tokens). */
  prefixCache: { queries: number; hits: number } | null
  /** Preemptions (by recompute) the pods made over the run; absent when unknown. */
  preemptions?: number
  /**
   * Requests of the data not sent because they do not fit the model's context (a trace
   * replay's; 0 or absent otherwise).
   */
  skippedRequests?: number
  /** Wall-clock seconds the run took to compute (DES) or execute (live). */
  elapsedSeconds: number
}
