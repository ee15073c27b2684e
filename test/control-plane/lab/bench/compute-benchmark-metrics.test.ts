import { describe, expect, it } from 'vitest'
import {
  computeBenchmarkMetrics,
  computePrefixCacheSummary,
  requestTimings,
} from '../../../../control-plane/lab/bench/compute-benchmark-metrics.ts'
import type {
  BenchmarkRun,
  RequestRecord,
} from '../../../../control-plane/lab/bench/request-record.ts'

const record = (fields: Partial<RequestRecord> & Pick<RequestRecord, 'id'>): RequestRecord => ({
  conversation: 0,
  turn: 0,
  startMs: 0,
  firstTokenMs: null,
  tokenTimesMs: [],
  endMs: 0,
  promptTokens: 0,
  outputTokens: 0,
  cachedTokens: 0,
  pod: null,
  error: null,
  ...fields,
})

/**
 * Four requests in the window [1 s, 5 s]:
 * r1: 1.0 → tokens at 1.2, 1.3, 1.4, 1.5 → end 1.5; 100 prompt (32 cached), 4 output
 * r2: 2.0 → tokens at 2.5, 2.7, 2.9 → end 3.0; 200 prompt, 3 output
 * r3: 3.0 → token at 3.1 → end 5.0; 50 prompt (16 cached), 1 output
 * r4: 4.0 → HTTP 500 at 4.5, no token
 */
const run: BenchmarkRun = {
  config: {
    mode: 'live',
    router: 'kinference',
    workload: 'shared-prefix',
    profile: 'poisson@1',
    rate: 1,
    pods: 3,
    gpuProfile: 'l40s-27b-fp8',
    seed: 42,
    dataSpec: 'prompt_tokens=100,output_tokens=4',
  },
  startMs: 1000,
  endMs: 5000,
  records: [
    record({
      id: 'r1',
      startMs: 1000,
      firstTokenMs: 1200,
      tokenTimesMs: [1200, 1300, 1400, 1500],
      endMs: 1500,
      promptTokens: 100,
      outputTokens: 4,
      cachedTokens: 32,
    }),
    record({
      id: 'r2',
      startMs: 2000,
      firstTokenMs: 2500,
      tokenTimesMs: [2500, 2700, 2900],
      endMs: 3000,
      promptTokens: 200,
      outputTokens: 3,
    }),
    record({
      id: 'r3',
      startMs: 3000,
      firstTokenMs: 3100,
      tokenTimesMs: [3100],
      endMs: 5000,
      promptTokens: 50,
      outputTokens: 1,
      cachedTokens: 16,
    }),
    record({ id: 'r4', startMs: 4000, endMs: 4500, error: 'HTTP 500: engine failed' }),
  ],
  prefixCache: { queries: 1000, hits: 250 },
  elapsedSeconds: 4.2,
}

describe('computeBenchmarkMetrics', () => {
  const metrics = computeBenchmarkMetrics(run)

  it('counts requests by status', () => {
    expect(metrics.request_totals).toEqual({ successful: 3, incomplete: 0, errored: 1, total: 4 })
  })

  it('per request: TTFT, ITL and TPOT as GuideLLM defines them', () => {
    const [r1, r2, r3] = run.records as [RequestRecord, RequestRecord, RequestRecord]
    expect(requestTimings(r1)).toEqual({
      timeToFirstTokenMs: 200,
      interTokenLatencyMs: 100, // (1500 − 1200) / 3
      timePerOutputTokenMs: 125, // (1500 − 1000) / 4, TTFT included
      requestLatencySeconds: 0.5,
    })
    expect(requestTimings(r2)).toEqual({
      timeToFirstTokenMs: 500,
      interTokenLatencyMs: 200,
      timePerOutputTokenMs: 300,
      requestLatencySeconds: 1,
    })
    // One output token: no ITL; TPOT runs to the last token, not to the end.
    expect(requestTimings(r3)).toMatchObject({
      interTokenLatencyMs: null,
      timePerOutputTokenMs: 100,
      requestLatencySeconds: 2,
    })
  })

  it('TTFT over the successful requests: 200, 500, 100 ms', () => {
    const ttft = metrics.time_to_first_token_ms.successful
    expect(ttft.mean).toBeCloseTo(800 / 3, 10)
    expect(ttft.median).toBe(200)
    expect(ttft.percentiles.p90).toBe(500)
    expect(ttft.percentiles.p01).toBe(100)
    expect(ttft).toMatchObject({ min: 100, max: 500, count: 3, total_sum: 800 })
    expect(ttft.variance).toBeCloseTo(86_666.666_666_667 / 3, 6)
    // The errored request had no token: not in TTFT (errored and total).
    expect(metrics.time_to_first_token_ms.errored.count).toBe(0)
    expect(metrics.time_to_first_token_ms.total.count).toBe(3)
  })

  it('ITL weighted by output − 1, TPOT by output (GuideLLM)', () => {
    const itl = metrics.inter_token_latency_ms.successful
    expect(itl.mean).toBeCloseTo((100 * 3 + 200 * 2) / 5, 10)
    expect(itl.median).toBe(100) // 3 of 5 weights at 100
    expect(itl.percentiles.p75).toBe(200)
    expect(itl.count).toBe(5)
    expect(itl.variance).toBeCloseTo(2400, 8)
    const tpot = metrics.time_per_output_token_ms.successful
    expect(tpot.mean).toBeCloseTo((125 * 4 + 300 * 3 + 100) / 8, 10)
    expect(tpot.median).toBe(125)
    expect(tpot.count).toBe(8)
  })

  it('request latency in seconds, by status and in total', () => {
    expect(metrics.request_latency.successful).toMatchObject({ median: 1, min: 0.5, max: 2 })
    expect(metrics.request_latency.successful.mean).toBeCloseTo(3.5 / 3, 12)
    expect(metrics.request_latency.errored).toMatchObject({ mean: 0.5, count: 1 })
    expect(metrics.request_latency.total).toMatchObject({ mean: 1, count: 4, mode: 0.5 })
  })

  it('token counts', () => {
    expect(metrics.prompt_token_count.successful).toMatchObject({
      total_sum: 350,
      count: 3,
      median: 100,
    })
    expect(metrics.output_token_count.successful).toMatchObject({ total_sum: 8, median: 3 })
    expect(metrics.total_token_count.successful).toMatchObject({ total_sum: 358, max: 203 })
    expect(metrics.prompt_token_count.total).toMatchObject({ count: 4, min: 0 })
  })

  it('throughputs: time-weighted rates whose mean is the total over the 4 s window', () => {
    const rps = metrics.requests_per_second.successful
    expect(rps.mean).toBeCloseTo(0.75, 12)
    expect(rps.median).toBeCloseTo(1 / 1.75, 12)
    expect(rps.count).toBe(3)
    expect(metrics.requests_per_second.total.mean).toBeCloseTo(1, 12)
    expect(metrics.requests_per_second.errored.mean).toBeCloseTo(0.25, 12)
    expect(metrics.output_tokens_per_second.successful.mean).toBeCloseTo(8 / 4, 12)
    expect(metrics.output_tokens_per_second.successful.count).toBe(8)
    expect(metrics.prompt_tokens_per_second.successful.mean).toBeCloseTo(350 / 4, 12)
    expect(metrics.tokens_per_second.successful.mean).toBeCloseTo(358 / 4, 12)
  })

  it('concurrency: the time-weighted number in flight; its mean is Σ latency / window', () => {
    const successful = metrics.request_concurrency.successful
    expect(successful.mean).toBeCloseTo(3.5 / 4, 12)
    expect(successful.median).toBe(1)
    expect(successful.count).toBe(3)
    expect(metrics.request_concurrency.total.mean).toBeCloseTo(4 / 4, 12)
    expect(metrics.request_concurrency.total.max).toBe(2) // r3 and r4 overlap
  })

  it('an empty run gives zeros, not NaN', () => {
    const empty = computeBenchmarkMetrics({ ...run, records: [], startMs: 0, endMs: 0 })
    expect(empty.request_totals.total).toBe(0)
    expect(empty.time_to_first_token_ms.successful).toMatchObject({ mean: 0, median: 0, count: 0 })
    expect(empty.requests_per_second.successful.mean).toBe(0)
    expect(JSON.stringify(empty)).not.toContain('null')
  })
})

describe('computePrefixCacheSummary', () => {
  it('reports the pods’ counters and the successful requests’ cached share', () => {
    expect(computePrefixCacheSummary(run)).toEqual({
      pod_queries: 1000,
      pod_hits: 250,
      pod_hit_rate: 0.25,
      request_prompt_tokens: 350,
      request_cached_tokens: 48,
      request_hit_rate: 48 / 350,
    })
  })

  it('has no pod rate without counters and no request rate without prompt tokens', () => {
    expect(computePrefixCacheSummary({ ...run, prefixCache: null, records: [] })).toMatchObject({
      pod_hit_rate: null,
      pod_queries: null,
      request_hit_rate: null,
    })
  })
})
