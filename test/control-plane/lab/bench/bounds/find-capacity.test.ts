import { describe, expect, it } from 'vitest'
import {
  type CapacityProbe,
  findCapacity,
} from '../../../../../control-plane/lab/bench/bounds/find-capacity.ts'

/** p90 TTFT grows exponentially with the rate and crosses 2 s at 10·ln 20 ≈ 29.96 req/s. */
const exponential = async (rate: number): Promise<CapacityProbe> => ({
  p90TtftMs: 100 * Math.exp(rate / 10),
  completedFraction: 1,
  stable: true,
})
const knee = 10 * Math.log(20)

describe('findCapacity', () => {
  it('brackets by doubling, then bisects to within the tolerance below the knee', async () => {
    const result = await findCapacity(exponential, {
      low: 1,
      high: 8,
      tolerance: 0.01,
      maxSteps: 20,
    })
    expect(result.converged).toBe(true)
    expect(result.rate).toBeLessThanOrEqual(knee)
    expect(result.rate).toBeGreaterThan(knee * 0.99)
    // 8, 16, 32 bracket it (32 fails); low is never needed.
    expect(result.steps.slice(0, 3).map((s) => [s.rate, s.passed])).toEqual([
      [8, true],
      [16, true],
      [32, false],
    ])
    expect(result.steps.length).toBeLessThanOrEqual(20)
    const passed = result.steps.filter((s) => s.passed).map((s) => s.rate)
    expect(result.rate).toBe(Math.max(...passed))
  })

  it('halves low while it fails, then bisects', async () => {
    const result = await findCapacity(exponential, { low: 50, high: 100, maxSteps: 20 })
    expect(result.steps.slice(0, 3).map((s) => s.rate)).toEqual([100, 50, 25])
    expect(result.converged).toBe(true)
    expect(result.rate).toBeGreaterThan(knee * 0.98)
    expect(result.rate).toBeLessThanOrEqual(knee)
  })

  it('fails a rate whose run does not complete 98% of its requests, however fast', async () => {
    const result = await findCapacity(
      async (rate) => ({ p90TtftMs: 50, completedFraction: rate <= 12 ? 1 : 0.97, stable: true }),
      { low: 1, high: 64, tolerance: 0.001, maxSteps: 30 },
    )
    expect(result.converged).toBe(true)
    expect(result.rate).toBeLessThanOrEqual(12)
    expect(result.rate).toBeGreaterThan(11.98)
  })

  it('stops after maxSteps without claiming convergence', async () => {
    const growing = await findCapacity(exponential, { low: 0.001, high: 0.002, maxSteps: 4 })
    expect(growing.steps).toHaveLength(4)
    expect(growing.converged).toBe(false)
    // Still doubling: the highest rate that passed.
    expect(growing.rate).toBe(0.016)
    const never = await findCapacity(
      async () => ({ p90TtftMs: 5000, completedFraction: 1, stable: true }),
      {
        low: 1,
        high: 2,
        maxSteps: 5,
      },
    )
    expect(never).toMatchObject({ rate: null, converged: false })
    expect(never.steps.map((s) => s.rate)).toEqual([2, 1, 0.5, 0.25, 0.125])
  })

  it('ends at one pass→fail edge of a non-monotone callback, not necessarily the highest', async () => {
    // Passes below 10 and again in [20, 30): whichever edge the bracket meets first wins.
    const bumpy = async (rate: number): Promise<CapacityProbe> => ({
      p90TtftMs: rate < 10 || (rate >= 20 && rate < 30) ? 500 : 3000,
      completedFraction: 1,
      stable: true,
    })
    const lowEdge = await findCapacity(bumpy, { low: 1, high: 32, tolerance: 0.01, maxSteps: 20 })
    expect(lowEdge.converged).toBe(true)
    expect(lowEdge.rate).toBeGreaterThan(9.9)
    expect(lowEdge.rate).toBeLessThan(10)
    const highEdge = await findCapacity(bumpy, { low: 1, high: 24, tolerance: 0.01, maxSteps: 20 })
    expect(highEdge.rate).toBeGreaterThan(29.7)
    expect(highEdge.rate).toBeLessThan(30)
  })

  it('refuses a bracket upside down, naming the option', async () => {
    await expect(findCapacity(exponential, { low: 5, high: 2 })).rejects.toThrow(
      /find capacity: low must be below high/,
    )
    await expect(findCapacity(exponential, { low: 1, high: 2, maxSteps: 0 })).rejects.toThrow(
      /maxSteps/,
    )
  })
})
