import type { EngineKvEvent, MultimodalFeature } from './engine-kv-event.ts'

// What the engine takes and gives, step by step (VllmEngine).

export type FinishReason = 'stop' | 'length'

/** A request as the engine sees it: token ids in, a planned output sequence out. */
export interface EngineRequestInput {
  id: string
  promptTokenIds: readonly number[]
  /**
   * The tokens the "model" will produce; the count is exact, the content synthetic. None
   * for a pooling request (prefill only), which ends with one `pooled` output.
   */
  outputTokenIds: readonly number[]
  finishReason: FinishReason
  /** LoRA adapter and cache_salt: part of the block hash, as in vLLM's extra_keys. */
  loraName?: string | null
  cacheSalt?: string | null
  /** Placeholder token ranges of images and other inputs: their identity enters the blocks. */
  multimodal?: readonly MultimodalFeature[]
  /** vLLM's per-request `kv_cache_report_mode` (extra_args); the pod's default when absent. */
  kvCacheReportMode?: 'incremental' | 'full'
  arrivalMs: number
}

export interface TokenOutput {
  requestId: string
  tokenId: number
  /** 0 for the first generated token. */
  index: number
  finished: FinishReason | null
  /** A pooling request's prompt computed (no token was generated; tokenId is -1). */
  pooled?: true
}

export interface StepResult {
  startMs: number
  durationMs: number
  scheduledTokens: number
  outputs: TokenOutput[]
  /**
   * Requests scheduled for the first time this step, with vLLM's `num_cached_tokens`: the
   * tokens computed when first scheduled, GPU hits and CPU-tier loads together (set in
   * `schedule()`, `vllm/v1/core/sched/scheduler.py`), which the OpenAI server reports as
   * `usage.prompt_tokens_details.cached_tokens`. A request that loads from the CPU tier is
   * scheduled once its load completes, so its queue time includes the load.
   */
  started: { requestId: string; numCachedTokens: number }[]
  preempted: string[]
  /** KV events of this step: one batch, as vLLM publishes once per step. */
  events: EngineKvEvent[]
}

export interface EngineStats {
  running: number
  waiting: number
  kvCacheUsage: number
  numGpuBlocks: number
  /** vLLM's exported `prefix_cache_queries`: every lookup of a request never preempted. */
  prefixCacheQueries: number
  /** vLLM's exported `prefix_cache_hits`, for the same lookups. */
  prefixCacheHits: number
  /** Lookups of preempted requests, which vLLM counts apart and does not export. */
  preemptedPrefixCacheQueries: number
  preemptedPrefixCacheHits: number
  /** The CPU tier's share (vLLM's `external_prefix_cache_queries/hits`). */
  externalPrefixCacheQueries: number
  externalPrefixCacheHits: number
  /** Blocks held by the CPU tier (0 without one). */
  cpuBlocks: number
  preemptions: number
  steps: number
}
