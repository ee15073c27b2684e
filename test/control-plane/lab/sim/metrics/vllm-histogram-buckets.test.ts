import { describe, expect, it } from 'vitest'
import {
  build125Buckets,
  vllmHistogramBuckets,
} from '../../../../../control-plane/lab/sim/metrics/vllm-histogram-buckets.ts'

describe('build125Buckets', () => {
  it('is 1, 2, 5 times powers of ten up to and including the maximum', () => {
    expect(build125Buckets(100)).toEqual([1, 2, 5, 10, 20, 50, 100])
    expect(build125Buckets(1)).toEqual([1])
    expect(build125Buckets(0)).toEqual([])
    expect(build125Buckets(40960)).toEqual([
      1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000,
    ])
  })
})

describe('vllmHistogramBuckets', () => {
  it('has the bounds vLLM V1 registers', () => {
    expect(vllmHistogramBuckets.timeToFirstToken).toHaveLength(22)
    expect(vllmHistogramBuckets.timeToFirstToken.at(-1)).toBe(2560)
    expect(vllmHistogramBuckets.perOutputToken).toHaveLength(19)
    expect(vllmHistogramBuckets.requestLatency).toHaveLength(21)
    expect(vllmHistogramBuckets.requestLatency.at(-1)).toBe(7680)
    expect(vllmHistogramBuckets.iterationTokens).toEqual([
      1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
    ])
  })
})
