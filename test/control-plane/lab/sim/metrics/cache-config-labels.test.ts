import { describe, expect, it } from 'vitest'
import { cacheConfigLabels } from '../../../../../control-plane/lab/sim/metrics/cache-config-labels.ts'

describe('cacheConfigLabels', () => {
  it("writes every value as Python's str() would", () => {
    expect(
      cacheConfigLabels(
        {
          blockSize: 32,
          numGpuBlocks: 9120,
          gpuMemoryUtilization: 1,
          cacheDtype: 'fp8',
          enablePrefixCaching: false,
          numCpuBlocks: 0,
          slidingWindow: 4096,
          kvCacheSizeTokens: 862437,
          extraLabels: { calculate_kv_scales: 'False', cpu_offload_gb: '0' },
        },
        '1',
      ),
    ).toEqual({
      block_size: '32',
      cache_dtype: 'fp8',
      calculate_kv_scales: 'False',
      cpu_offload_gb: '0',
      enable_prefix_caching: 'False',
      engine: '1',
      gpu_memory_utilization: '1.0',
      is_attention_free: 'False',
      kv_cache_memory_bytes: 'None',
      kv_cache_size_tokens: '862437',
      num_cpu_blocks: '0',
      num_gpu_blocks: '9120',
      num_gpu_blocks_override: 'None',
      prefix_caching_hash_algo: 'sha256',
      sliding_window: '4096',
    })
  })

  it('refuses extra labels that shadow a field, and non-integral counts', () => {
    const config = { blockSize: 16, numGpuBlocks: 10 }
    expect(() => cacheConfigLabels({ ...config, extraLabels: { block_size: '8' } }, '0')).toThrow(
      /block_size/,
    )
    expect(() => cacheConfigLabels({ ...config, extraLabels: { engine: '8' } }, '0')).toThrow(
      /engine/,
    )
    expect(() => cacheConfigLabels({ ...config, numGpuBlocks: -1 }, '0')).toThrow(/numGpuBlocks/)
    expect(() => cacheConfigLabels({ ...config, slidingWindow: 0.5 }, '0')).toThrow(/slidingWindow/)
    expect(() => cacheConfigLabels({ ...config, gpuMemoryUtilization: 0 }, '0')).toThrow(
      'cacheConfig: gpuMemoryUtilization must be in (0, 1]',
    )
  })

  it("fills in vLLM's defaults for the fields left out", () => {
    expect(cacheConfigLabels({ blockSize: 16, numGpuBlocks: 10 }, '0')).toEqual({
      block_size: '16',
      cache_dtype: 'auto',
      enable_prefix_caching: 'True',
      engine: '0',
      gpu_memory_utilization: '0.92',
      is_attention_free: 'False',
      kv_cache_memory_bytes: 'None',
      kv_cache_size_tokens: '160',
      num_cpu_blocks: 'None',
      num_gpu_blocks: '10',
      num_gpu_blocks_override: 'None',
      prefix_caching_hash_algo: 'sha256',
      sliding_window: 'None',
    })
    expect(
      cacheConfigLabels({ blockSize: 16, numGpuBlocks: 10, kvCacheSizeTokens: null }, '0'),
    ).toMatchObject({ kv_cache_size_tokens: 'None' })
  })
})
