import { describe, expect, it } from 'vitest'
import { IndexTrustTracker } from '../../../shared/routing/index-trust.ts'

describe('IndexTrustTracker', () => {
  it('demotes a drifting pod step by step and promotes it back with hysteresis', () => {
    const tracker = new IndexTrustTracker({ tolerance: 0.25 })
    for (let i = 0; i < 10; i++) tracker.observe(4000, 4000, 4100)
    expect(tracker.trust).toBe('precise')
    expect(tracker.confidence).toBe(1)
    // The index claims 4,000 cached tokens the pod does not have (a missed restart).
    const seen: string[] = []
    for (let i = 0; i < 20; i++) {
      tracker.observe(4000, 0, 4100)
      seen.push(tracker.trust)
    }
    expect(seen).toContain('approximate')
    expect(tracker.trust).toBe('load-only')
    expect(tracker.confidence).toBe(0)
    for (let i = 0; i < 30; i++) tracker.observe(4000, 4000, 4100)
    expect(tracker.trust).toBe('precise')
  })

  it('does not demote on fewer observations than the minimum', () => {
    const tracker = new IndexTrustTracker({ tolerance: 0.25, minObservations: 5 })
    for (let i = 0; i < 4; i++) tracker.observe(4000, 0, 4000)
    expect(tracker.trust).toBe('precise')
  })

  it.each([
    [{ tolerance: -0.1 }, 'index trust: tolerance must be a number >= 0'],
    [{ tolerance: Number.NaN }, 'index trust: tolerance must be a number >= 0'],
    [
      { tolerance: 0.25, minObservations: 0 },
      'index trust: minObservations must be a positive integer',
    ],
    [{ tolerance: 0.25, alpha: 0 }, 'index trust: alpha must be in (0, 1]'],
    [{ tolerance: 0.25, alpha: 1.5 }, 'index trust: alpha must be in (0, 1]'],
  ])('refuses %o', (options, message) => {
    expect(() => new IndexTrustTracker(options)).toThrow(
      expect.objectContaining({ code: 'invalid_config', message }),
    )
  })

  it('discounts hits while approximate by the drift', () => {
    const tracker = new IndexTrustTracker({ tolerance: 0.1, minObservations: 1, alpha: 1 })
    tracker.observe(1000, 800, 1000)
    expect(tracker.trust).toBe('approximate')
    expect(tracker.confidence).toBeCloseTo(0.8)
  })
})
