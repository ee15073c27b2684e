import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { pythonFloatRepr } from '../../metrics/float-to-go-string.ts'

/**
 * The vLLM `CacheConfig` fields a simulated pod reports in `vllm:cache_config_info`. vLLM
 * writes every field as a label, each value as Python's `str()` (`True`, `None`, `0.92`),
 * and the field list changes between releases; the typed fields are the ones the
 * releases share, `extraLabels` adds any others verbatim (already as Python would print
 * them, e.g. `{ calculate_kv_scales: 'False' }`).
 */
export interface VllmCacheConfig {
  blockSize: number
  numGpuBlocks: number
  /** `vllm/config/cache.py` defaults to 0.92 (older releases: 0.9). */
  gpuMemoryUtilization?: number
  cacheDtype?: string
  enablePrefixCaching?: boolean
  prefixCachingHashAlgo?: string
  isAttentionFree?: boolean
  numCpuBlocks?: number | null
  numGpuBlocksOverride?: number | null
  slidingWindow?: number | null
  kvCacheMemoryBytes?: number | null
  /** Defaults to blockSize × numGpuBlocks, which is what it is for a model with one KV group. */
  kvCacheSizeTokens?: number | null
  extraLabels?: Readonly<Record<string, string>>
}

/** The labels of `vllm:cache_config_info` for one engine, values as Python's `str()`. */
export function cacheConfigLabels(config: VllmCacheConfig, engine: string): Record<string, string> {
  const blockSize = int('blockSize', config.blockSize)
  const numGpuBlocks = int('numGpuBlocks', config.numGpuBlocks)
  const typed: Record<string, string> = {
    block_size: blockSize,
    cache_dtype: config.cacheDtype ?? 'auto',
    enable_prefix_caching: bool(config.enablePrefixCaching ?? true),
    gpu_memory_utilization: pythonFloatRepr(config.gpuMemoryUtilization ?? 0.92),
    is_attention_free: bool(config.isAttentionFree ?? false),
    kv_cache_memory_bytes: optionalInt('kvCacheMemoryBytes', config.kvCacheMemoryBytes),
    kv_cache_size_tokens: optionalInt(
      'kvCacheSizeTokens',
      config.kvCacheSizeTokens === undefined
        ? config.blockSize * config.numGpuBlocks
        : config.kvCacheSizeTokens,
    ),
    num_cpu_blocks: optionalInt('numCpuBlocks', config.numCpuBlocks),
    num_gpu_blocks: numGpuBlocks,
    num_gpu_blocks_override: optionalInt('numGpuBlocksOverride', config.numGpuBlocksOverride),
    prefix_caching_hash_algo: config.prefixCachingHashAlgo ?? 'sha256',
    sliding_window: optionalInt('slidingWindow', config.slidingWindow),
    engine,
  }
  for (const name of Object.keys(config.extraLabels ?? {})) {
    if (Object.hasOwn(typed, name)) {
      throw new KinfError('invalid_config', `cacheConfig.extraLabels: "${name}" is set already`)
    }
  }
  return { ...config.extraLabels, ...typed }
}

function bool(value: boolean): string {
  return value ? 'True' : 'False'
}

function int(field: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new KinfError('invalid_config', `cacheConfig.${field} must be a whole number >= 0`)
  }
  return String(value)
}

function optionalInt(field: string, value: number | null | undefined): string {
  return value === null || value === undefined ? 'None' : int(field, value)
}
