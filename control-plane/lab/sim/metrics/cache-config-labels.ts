import { z } from 'zod'
import { parseOptions } from '../../../../shared/config/parse-options.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { pythonFloatRepr } from '../../../../shared/metrics/float-to-go-string.ts'

const countError = 'must be a whole number >= 0'
const count = z.int({ error: countError }).min(0, { error: countError })
/** Absent or null: Python's None. */
const optionalCount = count.nullable().default(null)

/**
 * The vLLM `CacheConfig` fields a simulated pod reports in `vllm:cache_config_info`, with
 * vLLM's defaults. vLLM writes every field as a label, each value as Python's `str()`
 * (`True`, `None`, `0.92`), and the field list changes between releases; the typed fields
 * are the ones the releases share, `extraLabels` adds any others verbatim (already as
 * Python would print them, e.g. `{ calculate_kv_scales: 'False' }`).
 */
export const VllmCacheConfig = z.strictObject({
  blockSize: count,
  numGpuBlocks: count,
  gpuMemoryUtilization: z
    .number({ error: 'must be in (0, 1]' })
    .gt(0, { error: 'must be in (0, 1]' })
    .max(1, { error: 'must be in (0, 1]' })
    .default(0.92)
    .describe('vllm/config/cache.py defaults to 0.92 (older releases: 0.9)'),
  cacheDtype: z.string().default('auto'),
  enablePrefixCaching: z.boolean().default(true),
  prefixCachingHashAlgo: z.string().default('sha256'),
  isAttentionFree: z.boolean().default(false),
  numCpuBlocks: optionalCount,
  numGpuBlocksOverride: optionalCount,
  slidingWindow: optionalCount,
  kvCacheMemoryBytes: optionalCount,
  // Absent, not null: derived from the block fields below.
  kvCacheSizeTokens: count
    .nullable()
    .optional()
    .describe('blockSize × numGpuBlocks when absent: what it is for a model with one KV group'),
  extraLabels: z.record(z.string(), z.string()).default({}),
})
/** What callers write (the name create-vllm-metrics uses); cacheConfigLabels fills in the rest. */
export type VllmCacheConfig = z.input<typeof VllmCacheConfig>

/** The labels of `vllm:cache_config_info` for one engine, values as Python's `str()`. */
export function cacheConfigLabels(input: VllmCacheConfig, engine: string): Record<string, string> {
  const config = parseOptions(VllmCacheConfig, input, 'cacheConfig')
  const typed: Record<string, string> = {
    block_size: String(config.blockSize),
    cache_dtype: config.cacheDtype,
    enable_prefix_caching: bool(config.enablePrefixCaching),
    gpu_memory_utilization: pythonFloatRepr(config.gpuMemoryUtilization),
    is_attention_free: bool(config.isAttentionFree),
    kv_cache_memory_bytes: optionalInt(config.kvCacheMemoryBytes),
    kv_cache_size_tokens: optionalInt(
      config.kvCacheSizeTokens === undefined
        ? config.blockSize * config.numGpuBlocks
        : config.kvCacheSizeTokens,
    ),
    num_cpu_blocks: optionalInt(config.numCpuBlocks),
    num_gpu_blocks: String(config.numGpuBlocks),
    num_gpu_blocks_override: optionalInt(config.numGpuBlocksOverride),
    prefix_caching_hash_algo: config.prefixCachingHashAlgo,
    sliding_window: optionalInt(config.slidingWindow),
    engine,
  }
  for (const name of Object.keys(config.extraLabels)) {
    if (Object.hasOwn(typed, name)) {
      throw new KinfError('invalid_config', `cacheConfig.extraLabels: "${name}" is set already`)
    }
  }
  return { ...config.extraLabels, ...typed }
}

function bool(value: boolean): string {
  return value ? 'True' : 'False'
}

function optionalInt(value: number | null): string {
  return value === null ? 'None' : String(value)
}
