import { describe, expect, it } from 'vitest'
import {
  extractVllmLoadSignals,
  VllmLoadSignals,
} from '../../../control-plane/metrics/extract-vllm-load-signals.ts'
import { parsePrometheusText } from '../../../control-plane/metrics/parse-prometheus-text.ts'

const samplesOf = (text: string) => {
  const { samples, errors } = parsePrometheusText(text)
  expect(errors).toEqual([])
  return samples
}

const current = `
vllm:num_requests_running{engine="0",model_name="m"} 4.0
vllm:num_requests_waiting{engine="0",model_name="m"} 2.0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000.0
vllm:prefix_cache_queries_created{engine="0",model_name="m"} 1.7869106011177013e+09
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 250.0
vllm:num_requests_running{engine="0",model_name="other"} 99.0
vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",num_gpu_blocks="24978"} 1.0
`

describe('extractVllmLoadSignals', () => {
  it('reads the current names for the model asked for', () => {
    const signals = extractVllmLoadSignals(samplesOf(current), 'm')
    expect(signals).toEqual({
      running: 4,
      waiting: 2,
      kvCacheUsage: 0.5,
      prefixCacheQueries: 1000,
      prefixCacheHits: 250,
      numGpuBlocks: 24978,
      blockSize: 16,
      engines: ['0'],
      deprecatedNames: [],
    })
    expect(() => VllmLoadSignals.parse(signals)).not.toThrow()
  })

  it('reads whatever model_name the pod serves for a pool of any model ("*")', () => {
    const only = samplesOf(current.replaceAll('model_name="m"', 'model_name="served-by-the-pod"'))
    expect(extractVllmLoadSignals(only, 'm').running).toBeNull()
    const signals = extractVllmLoadSignals(only, '*')
    expect(signals).toMatchObject({ running: 4, waiting: 2, kvCacheUsage: 0.5 })
  })

  it('falls back to the deprecated names only when the current ones are missing', () => {
    const old = `
vllm:num_requests_running{model_name="m"} 1.0
vllm:num_requests_waiting{model_name="m"} 0.0
vllm:gpu_cache_usage_perc{model_name="m"} 0.75
vllm:gpu_prefix_cache_queries_total{model_name="m"} 64.0
vllm:gpu_prefix_cache_hits_total{model_name="m"} 16.0
vllm:cache_config_info{block_size="32",num_gpu_blocks="None"} 1.0
`
    expect(extractVllmLoadSignals(samplesOf(old), 'm')).toEqual({
      running: 1,
      waiting: 0,
      kvCacheUsage: 0.75,
      prefixCacheQueries: 64,
      prefixCacheHits: 16,
      numGpuBlocks: null,
      blockSize: 32,
      engines: [''],
      deprecatedNames: [
        'vllm:gpu_cache_usage_perc',
        'vllm:gpu_prefix_cache_queries_total',
        'vllm:gpu_prefix_cache_hits_total',
      ],
    })
    const both = `${current}vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.9\n`
    const signals = extractVllmLoadSignals(samplesOf(both), 'm')
    expect(signals.kvCacheUsage).toBe(0.5)
    expect(signals.deprecatedNames).toEqual([])
  })

  it('sums counts and averages usage over data-parallel engines, or reads one engine', () => {
    const dp = `
vllm:num_requests_running{engine="0",model_name="m"} 4.0
vllm:num_requests_running{engine="1",model_name="m"} 6.0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.75
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="100"} 1.0
vllm:cache_config_info{block_size="16",engine="1",num_gpu_blocks="120"} 1.0
`
    const all = extractVllmLoadSignals(samplesOf(dp), 'm')
    expect(all).toMatchObject({ running: 10, kvCacheUsage: 0.5, numGpuBlocks: 220, blockSize: 16 })
    expect(all.engines).toEqual(['0', '1'])
    const one = extractVllmLoadSignals(samplesOf(dp), 'm', { engine: '1' })
    expect(one).toMatchObject({ running: 6, kvCacheUsage: 0.75, numGpuBlocks: 120 })
    expect(one.engines).toEqual(['1'])
  })

  it('gives null for what is missing, not a number, or inconsistent', () => {
    expect(extractVllmLoadSignals([], 'm')).toEqual({
      running: null,
      waiting: null,
      kvCacheUsage: null,
      prefixCacheQueries: null,
      prefixCacheHits: null,
      numGpuBlocks: null,
      blockSize: null,
      engines: [],
      deprecatedNames: [],
    })
    const odd = `
vllm:num_requests_running{engine="0",model_name="m"} NaN
vllm:num_requests_waiting{engine="0",model_name="m"} -1
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="10"} 1.0
vllm:cache_config_info{block_size="32",engine="1",num_gpu_blocks="10"} 1.0
`
    expect(extractVllmLoadSignals(samplesOf(odd), 'm')).toMatchObject({
      running: null,
      waiting: null,
      numGpuBlocks: 20,
      blockSize: null,
    })
  })
})
