import { describe, expect, it } from 'vitest'
import type {
  BenchmarkRun,
  RequestRecord,
} from '../../../../../control-plane/bench/request-record.ts'
import { completedWithinRun } from '../../../../../control-plane/bench/suite/wave2/run-summary.ts'

/** `count` requests a second apart, the i-th taking `e2e(i)` ms. */
function runOf(
  count: number,
  e2e: (i: number) => number,
  failed: (i: number) => boolean = () => false,
): BenchmarkRun {
  const records: RequestRecord[] = Array.from({ length: count }, (_, i) => ({
    id: `r${i}`,
    conversation: i,
    turn: 0,
    startMs: i * 1000,
    firstTokenMs: i * 1000 + 100,
    tokenTimesMs: [],
    endMs: i * 1000 + e2e(i),
    promptTokens: 10,
    outputTokens: 1,
    cachedTokens: 0,
    pod: null,
    error: failed(i) ? 'boom' : null,
  }))
  return {
    config: {
      mode: 'des',
      router: 'r',
      workload: 'w',
      profile: 'poisson@1',
      rate: 1,
      pods: 1,
      gpuProfile: 'l40s-27b-fp8',
      seed: 1,
      dataSpec: '',
    },
    startMs: 0,
    endMs: Math.max(...records.map((r) => r.endMs)),
    records,
    prefixCache: null,
    elapsedSeconds: 0,
  }
}

describe('completedWithinRun', () => {
  it('is 1 for a pool that keeps up, however long each answer takes (noise included)', () => {
    expect(completedWithinRun(runOf(300, (i) => 20_000 + ((i * 7919) % 5000)))).toBe(1)
  })

  it('drops as answers come ever later: a queue building', () => {
    const late = completedWithinRun(runOf(300, (i) => 5_000 + i * 500))
    expect(late).toBeLessThan(0.8)
  })

  it('counts failed requests as not completed', () => {
    expect(
      completedWithinRun(
        runOf(
          100,
          () => 1000,
          (i) => i % 10 === 0,
        ),
      ),
    ).toBeCloseTo(0.9, 12)
    expect(completedWithinRun({ ...runOf(1, () => 1), records: [] })).toBe(0)
  })
})
