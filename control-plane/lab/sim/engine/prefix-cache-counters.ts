/** The engine's prefix-cache counters, in tokens, since it started. */
export interface PrefixCacheCounts {
  /** Lookups of requests never preempted: vLLM's `prefix_cache_queries` (exported). */
  queries: number
  /** Tokens those lookups found: `prefix_cache_hits` (exported). */
  hits: number
  /** Lookups of previously preempted requests, kept apart and not exported. */
  preemptedQueries: number
  preemptedHits: number
  /** The connector's (CPU tier's) share: `external_prefix_cache_queries/hits`, preempted apart. */
  externalQueries: number
  externalHits: number
}

/**
 * vLLM's `PrefixCacheStats` (`vllm/v1/metrics/stats.py`): `record()` runs at every
 * `get_computed_blocks` call, so a request whose allocation failed is counted again when
 * it is retried, and a request already preempted counts as `preempted_*`, which
 * `vllm/v1/metrics/loggers.py` does not export, so a victim re-hitting its own blocks does
 * not inflate the hit rate. The connector's counters (`connector_prefix_cache_stats` in
 * `scheduler.py`) are recorded once the request is admitted, for the tokens the local
 * cache did not have; their preempted share is not kept.
 */
export class PrefixCacheCounters {
  private readonly counts: PrefixCacheCounts = {
    queries: 0,
    hits: 0,
    preemptedQueries: 0,
    preemptedHits: 0,
    externalQueries: 0,
    externalHits: 0,
  }

  recordLookup(numTokens: number, numHits: number, preempted: boolean): void {
    if (preempted) {
      this.counts.preemptedQueries += numTokens
      this.counts.preemptedHits += numHits
    } else {
      this.counts.queries += numTokens
      this.counts.hits += numHits
    }
  }

  recordExternal(queries: number, hits: number, preempted: boolean): void {
    if (queries === 0 || preempted) return
    this.counts.externalQueries += queries
    this.counts.externalHits += hits
  }

  get snapshot(): PrefixCacheCounts {
    return { ...this.counts }
  }
}
