import { z } from 'zod'

/**
 * vLLM's OffloadingConnector with a CPU tier
 * (`vllm/distributed/kv_transfer/kv_connector/v1/offloading/`): blocks are copied to CPU
 * memory, found there by a later request's lookup and loaded back over the host link
 * before the request is scheduled (its cached tokens then include these external tokens,
 * `vllm/v1/core/sched/scheduler.py`), and evicted from CPU in LRU order. Its events share
 * the step's batch, after the GPU ones (`scheduler.py`: `events.extend(connector_events)`).
 */
export const SimCpuOffloadOptions = z.strictObject({
  capacityBlocks: z
    .int()
    .min(1)
    .max(100_000_000)
    .describe('CPU tier size, in blocks of the group they came from'),
  store: z
    .enum(['every-block', 'evicted'])
    .default('every-block')
    .describe(
      "'every-block': each block is stored as it fills, as the OffloadingConnector's " +
        "_get_reqs_to_store does; 'evicted': only blocks the GPU pool evicts",
    ),
  hostLinkBytesPerSecond: z
    .number()
    .positive()
    .max(1e13)
    .default(25e9)
    .describe(
      "Bandwidth of the GPU-host link in each direction, bytes/s: a load of n tokens takes n × the profile's KV bytes per token / this. Default: PCIe Gen4 x16, ~25 GB/s effective of its 32 GB/s",
    ),
  selfDescribing: z
    .boolean()
    .default(false)
    .describe(
      'OffloadingKVEventsConfig.self_describing_kv_events (offloading/events.py): CPU events of full-attention groups carry parent, token ids and block size; otherwise they are placeholders with block_size 0 and no token ids',
    ),
})
export type SimCpuOffloadOptions = z.infer<typeof SimCpuOffloadOptions>

/**
 * A hybrid model (vLLM's HybridKVCacheCoordinator, `vllm/v1/core/kv_cache_coordinator.py`):
 * one full-attention KV-cache group and sliding-window groups, each with its own block
 * size, all drawing blocks from one pool.
 */
export const SimHybridOptions = z.strictObject({
  slidingWindow: z.int().min(1).max(10_000_000).describe('Tokens a sliding-window layer attends'),
  slidingWindowGroups: z
    .int()
    .min(1)
    .max(16)
    .default(1)
    .describe('Sliding-window groups of identical spec (vLLM splits layers into equal groups)'),
  fullAttentionBlockSize: z
    .int()
    .min(1)
    .max(65_536)
    .nullable()
    .default(null)
    .describe("The full-attention group's block size; null: the profile's"),
  slidingWindowBlockSize: z
    .int()
    .min(1)
    .max(65_536)
    .nullable()
    .default(null)
    .describe("The sliding-window groups' block size; null: the profile's"),
  slidingWindowFirst: z
    .boolean()
    .default(false)
    .describe('Number the sliding-window groups before the full-attention one'),
})
export type SimHybridOptions = z.infer<typeof SimHybridOptions>

/**
 * The KV-event variants a simulated pod emits. The defaults are vLLM's default
 * single-group, GPU-only configuration.
 */
export const SimKvEventsOptions = z.strictObject({
  cpuOffload: SimCpuOffloadOptions.nullable().default(null),
  hybrid: SimHybridOptions.nullable().default(null),
  extraKeys: z
    .enum(['plain', 'typed', 'omitted'])
    .default('plain')
    .describe(
      "'plain': BlockStored.extra_keys as vLLM sends it, one tuple or null per block (block_pool.py); 'typed': the tagged ExtraKey structs of vLLM PR #55488 (closed, not merged) with event_version; 'omitted': releases before vLLM PR #33304",
    ),
  groupFields: z
    .boolean()
    .default(false)
    .describe(
      'Single-group events carry group_idx and kv_cache_spec_kind as newer vLLM writes them (PRs #37688, #40984); hybrid models always do',
    ),
  reportMode: z
    .enum(['incremental', 'full'])
    .default('incremental')
    .describe(
      "kv_cache_report_mode for requests that do not set it (vLLM PR #45261): 'full' re-announces blocks reused from the prefix cache",
    ),
  replayFraming: z
    .enum(['topic', 'legacy'])
    .default('topic')
    .describe(
      "Replay replies: 'topic' is ['', topic, seq, payload] (vLLM PR #45177), 'legacy' ['', seq, payload]",
    ),
})
export type SimKvEventsOptions = z.infer<typeof SimKvEventsOptions>
export type SimKvEventsOptionsInput = z.input<typeof SimKvEventsOptions>

export const defaultKvEventsOptions: SimKvEventsOptions = SimKvEventsOptions.parse({})
