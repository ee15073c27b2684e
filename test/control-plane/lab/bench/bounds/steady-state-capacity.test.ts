import { describe, expect, it } from 'vitest'
import {
  type CapacityProbe,
  findCapacity,
  steadyStateRequests,
} from '../../../../../control-plane/lab/bench/bounds/find-capacity.ts'
import { baselineStability } from '../../../../../control-plane/lab/bench/suite/baseline-stability.ts'
import { completedWithinRun } from '../../../../../control-plane/lab/bench/suite/targets/run-summary.ts'
import { timedBenchRun } from '../../../../support/timed-bench-run.ts'

/** Requests a single FIFO server of this rate (req/s) serves. */
const serviceRate = 10

/**
 * `count` requests arriving at `rate` (req/s, evenly spaced) at a server of `serviceRate`:
 * the i-th waits for the backlog built by the excess arrivals before it, then takes 200 to
 * 400 ms (a fixed pattern, no randomness) to its first token and 1 s more to its last.
 * Below the service rate nothing queues; above it the wait grows with the run's length.
 */
function queueRun(rate: number, count: number) {
  const gapMs = 1000 / rate
  const waitMs = (i: number) => Math.max(0, ((rate - serviceRate) / serviceRate) * i * gapMs)
  const ttft = (i: number) => waitMs(i) + 200 + 50 * (i % 5)
  return timedBenchRun({
    profile: `poisson@${rate}`,
    count,
    gapMs,
    ttftMs: ttft,
    e2eMs: (i) => ttft(i) + 1000,
  })
}

function p90Ms(run: ReturnType<typeof queueRun>): number {
  const ttfts = run.records.map((r) => (r.firstTokenMs as number) - r.startMs).sort((a, b) => a - b)
  return ttfts[Math.ceil(0.9 * ttfts.length) - 1] as number
}

/** What the targets suite reads from a run, for the synthetic queue of `count(rate)` requests. */
const probeOf =
  (count: (rate: number) => number) =>
  async (rate: number): Promise<CapacityProbe> => {
    const run = queueRun(rate, count(rate))
    const stability = baselineStability(run)
    return {
      p90TtftMs: p90Ms(run),
      completedFraction: completedWithinRun(run),
      stable: stability.stable,
      why: stability.why,
    }
  }

describe('capacity in steady state', () => {
  it('a run whose TTFT grows across its thirds is unstable, though its p90 and completion pass', async () => {
    const probe = await probeOf(() => 600)(10.25)
    expect(probe.p90TtftMs).toBeLessThanOrEqual(2000)
    expect(probe.completedFraction).toBeGreaterThanOrEqual(0.98)
    expect(probe.stable).toBe(false)
    expect(probe.why).toMatch(/TTFT trending/)
    const below = await probeOf(() => 600)(9.5)
    expect(below).toMatchObject({ stable: true, why: 'stable' })
  })

  it('a 600-request yardstick counts a transient as capacity; the steady-state one does not', async () => {
    const options = { low: 2, high: 16, tolerance: 0.01, maxSteps: 20 }
    // Blind to the trend, short runs put capacity past what the server sustains…
    const transient = await findCapacity(async (rate) => {
      const probe = await probeOf(() => 600)(rate)
      return { ...probe, stable: true }
    }, options)
    expect(transient.rate).toBeGreaterThan(serviceRate * 1.02)
    // …the trend test fails them, and runs of steady-state length leave at most the tolerance.
    const steady = await findCapacity(
      probeOf((rate) => steadyStateRequests(rate)),
      options,
    )
    expect(steady.converged).toBe(true)
    expect(steady.rate).toBeGreaterThan(serviceRate * 0.98)
    expect(steady.rate).toBeLessThanOrEqual(serviceRate * 1.02)
    const unstable = steady.steps.filter((s) => !s.stable)
    expect(unstable.length).toBeGreaterThan(0)
    for (const step of unstable) expect(step.passed).toBe(false)
  })

  it('never runs or reports a rate above the ceiling, even when every rate passes', async () => {
    const always = async (): Promise<CapacityProbe> => ({
      p90TtftMs: 100,
      completedFraction: 1,
      stable: true,
    })
    const result = await findCapacity(always, { low: 1, high: 16, ceiling: 9.59 })
    expect(result).toMatchObject({ rate: 9.59, converged: true })
    expect(result.steps.map((s) => s.rate)).toEqual([9.59])
    const doubling = await findCapacity(always, { low: 1, high: 4, ceiling: 9.59, maxSteps: 5 })
    expect(doubling.steps.map((s) => s.rate)).toEqual([4, 8, 9.59])
    expect(doubling.rate).toBe(9.59)
    // Below the ceiling it is bisection as before, and not at the ceiling.
    const queue = await findCapacity(probeOf(steadyStateRequests), {
      low: 2,
      high: 16,
      ceiling: 12,
      maxSteps: 20,
    })
    expect(queue.rate).toBeLessThan(12)
    expect(queue.rate).toBeLessThanOrEqual(12)
    for (const step of queue.steps) expect(step.rate).toBeLessThanOrEqual(12)
    await expect(findCapacity(always, { low: 10, high: 16, ceiling: 9.59 })).rejects.toThrow(
      /low must be below the ceiling/,
    )
  })

  it('sizes a run by the larger of its request and duration floors, scaled', () => {
    expect(steadyStateRequests(1)).toBe(600)
    expect(steadyStateRequests(10)).toBe(1800)
    expect(steadyStateRequests(10, 0.04)).toBe(72)
    expect(steadyStateRequests(2, 1, { minRequests: 30, minSeconds: 60 })).toBe(120)
  })
})
