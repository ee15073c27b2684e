import type {
  BenchmarkMetrics,
  PrefixCacheSummary,
  StatusBreakdown,
} from './compute-benchmark-metrics.ts'

/** One benchmark of the report: GuideLLM's paths (config, scheduler_metrics, metrics). */
export interface BenchmarkReportEntry {
  config: {
    router: string
    workload: string
    profile: string
    rate: number | null
    mode: 'des' | 'live'
    pods: number
    gpu_profile: string
    seed: number
    data: string
  }
  scheduler_metrics: {
    /** Epoch seconds for live runs; the simulation's clock (from 0) for DES runs. */
    start_time: number
    end_time: number
    requests_made: StatusBreakdown<number>
    /** Wall-clock seconds the run took to compute (DES) or execute (live). */
    elapsed_seconds: number
  }
  metrics: BenchmarkMetrics
  prefix_cache: PrefixCacheSummary
  /** The error of the first request that failed (by start time); null when none did. */
  first_error: string | null
}
