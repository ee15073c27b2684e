import { describe, expect, it } from 'vitest'
import { completedWithinRun } from '../../../../../../control-plane/lab/bench/suite/targets/run-summary.ts'
import { timedBenchRun } from '../../../../../support/timed-bench-run.ts'

/** `count` requests a second apart, the i-th taking `e2e(i)` ms. */
const runOf = (count: number, e2e: (i: number) => number, failed?: (i: number) => boolean) =>
  timedBenchRun({ count, e2eMs: e2e, ...(failed ? { failed } : {}) })

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
