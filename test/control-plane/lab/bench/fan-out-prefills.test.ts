import { beforeAll, describe, expect, it } from 'vitest'
import {
  type ChatFrame,
  createChatFrame,
} from '../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { runDesJob } from '../../../../control-plane/lab/bench/des/des-job.ts'
import { fanOutPrefills } from '../../../../control-plane/lab/bench/fan-out-prefills.ts'
import type {
  BenchmarkRun,
  RequestRecord,
} from '../../../../control-plane/lab/bench/request-record.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'

let assets: ReturnType<typeof loadSimModelAssets>
let frame: ChatFrame

beforeAll(() => {
  assets = loadSimModelAssets()
  frame = createChatFrame(assets.tokenizer)
})

const data = 'fan_out=4,prefix_tokens=100,prompt_tokens=16,output_tokens=2'

function runOf(records: Partial<RequestRecord>[], dataSpec = data): BenchmarkRun {
  return {
    config: {
      mode: 'des',
      router: 'test',
      workload: 'fan-out',
      profile: 'poisson@4',
      rate: 4,
      pods: 3,
      gpuProfile: 'l40s-27b-fp8',
      seed: 1,
      dataSpec,
    },
    startMs: 0,
    endMs: 1,
    records: records.map((record, i) => ({
      id: `r${i}`,
      conversation: 0,
      turn: 0,
      startMs: 0,
      firstTokenMs: 1,
      tokenTimesMs: [1],
      endMs: 1,
      promptTokens: 140,
      outputTokens: 2,
      cachedTokens: 0,
      pod: 'pod-0',
      error: null,
      ...record,
    })),
    prefixCache: null,
    elapsedSeconds: 0,
  }
}

describe('fanOutPrefills', () => {
  it('counts per burst the siblings that found fewer cached tokens than the prefix’s whole blocks', () => {
    // The system message is the frame around 100 prefix tokens; its whole blocks are what hits.
    const whole = Math.floor((frame.open.system.length + 100 + frame.close.length) / 16) * 16
    const run = runOf([
      // Burst 0: prefilled on pod-0 twice at once, hit once, prefilled on pod-1.
      { conversation: 0, pod: 'pod-0', cachedTokens: 0 },
      { conversation: 1, pod: 'pod-0', cachedTokens: whole - 16 },
      { conversation: 2, pod: 'pod-0', cachedTokens: whole },
      { conversation: 3, pod: 'pod-1', cachedTokens: 0 },
      // Burst 1: once; a failed sibling and a later turn do not count.
      { conversation: 4, pod: 'pod-2', cachedTokens: 0 },
      { conversation: 5, pod: 'pod-2', cachedTokens: whole },
      { conversation: 6, pod: 'pod-1', cachedTokens: 0, error: 'HTTP 500' },
      { conversation: 7, turn: 1, pod: 'pod-0', cachedTokens: 0 },
    ])
    expect(fanOutPrefills(run, frame)).toEqual({
      prefixes: 2,
      duplicatePrefillRatio: (3 + 1) / 2,
      prefillingPods: (2 + 1) / 2,
    })
  })

  it('is null for runs without fan-out', () => {
    expect(fanOutPrefills(runOf([{}], 'prompt_tokens=8,output_tokens=1'), frame)).toBeNull()
    expect(fanOutPrefills(runOf([{}], 'trace:mooncake-synthetic'), frame)).toBeNull()
  })

  it('sees round robin prefill every burst on every pod, a cache-aware router on fewer', async () => {
    const job = (router: string) =>
      runDesJob(
        {
          workloadName: 'fan-out',
          data: 'fan_out=16,fan_out_window_ms=50,prefix_tokens=4096,prompt_tokens=128,output_tokens=16',
          profile: 'poisson',
          rate: 4,
          router,
          maxRequests: 64,
          pods: 3,
          gpuProfile: 'l40s-27b-fp8',
          seed: 3,
        },
        assets,
      )
    const roundRobin = fanOutPrefills(await job('round-robin'), frame)
    const cacheAware = fanOutPrefills(await job('kinference'), frame)
    expect(roundRobin?.prefixes).toBe(4)
    // 16 siblings over 3 pods, none holding the fresh prefix: each pod computes it.
    expect(roundRobin?.prefillingPods).toBe(3)
    expect(roundRobin?.duplicatePrefillRatio).toBeGreaterThanOrEqual(3)
    expect(cacheAware?.prefixes).toBe(4)
    expect(cacheAware?.duplicatePrefillRatio).toBeGreaterThanOrEqual(1)
    expect(cacheAware?.duplicatePrefillRatio).toBeLessThan(roundRobin?.duplicatePrefillRatio ?? 0)
  })
})
