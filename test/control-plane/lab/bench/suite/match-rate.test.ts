import { describe, expect, it } from 'vitest'
import { matchRate } from '../../../../../control-plane/lab/bench/suite/match-rate.ts'

describe('matchRate', () => {
  it('finds the rate where a rising median crosses the target, within its probes', async () => {
    // A queue that blows up past 4 req/s: 0.3 s below, then steeply more.
    const median = async (rate: number) => (rate < 4 ? 0.3 : 0.3 + (rate - 4) * 20)
    const matched = await matchRate(median, 6.88, 1, 16, 10)
    expect(matched.rate).toBeGreaterThan(4.2)
    expect(matched.rate).toBeLessThan(4.5)
    expect(Math.abs(matched.medianS - 6.88)).toBeLessThan(1)
    expect(matched.probes).toHaveLength(10)
  })

  it('reports the closest probe when the target is never reached', async () => {
    const matched = await matchRate(async () => 0.2, 6.88, 1, 8, 4)
    expect(matched.medianS).toBe(0.2)
    expect(matched.probes.map((p) => p.rate)).toEqual(
      [...matched.probes.map((p) => p.rate)].sort((a, b) => a - b),
    )
  })
})
