import { describe, expect, it } from 'vitest'
import { admissionWaitMs } from '../../../shared/routing/pod-memory.ts'
import type { PodMemory } from '../../../shared/routing/routing-strategy.ts'

const memory = (overrides: Partial<PodMemory> = {}): PodMemory => ({
  capacityTokens: 10_000,
  usedTokens: 8_000,
  pendingTokens: 0,
  stepMs: 50,
  msPerContextToken: 2e-4,
  releases: () => [
    [10, 500],
    [40, 1_500],
    [100, 2_000],
  ],
  ...overrides,
})

describe('admissionWaitMs', () => {
  it('is zero while the blocks fit after the requests ahead', () => {
    expect(admissionWaitMs(memory(), 2_000)).toBe(0)
    expect(admissionWaitMs(memory({ pendingTokens: 1_000 }), 1_000)).toBe(0)
  })

  it('waits for the soonest releases that cover the shortfall', () => {
    // 8000 + 2500 − 10000 = 500 short: the first release (10 steps) covers it.
    expect(admissionWaitMs(memory(), 2_500)).toBe(10 * 50)
    // 1,500 short: the first two (500 + 1,500) by step 40.
    expect(admissionWaitMs(memory(), 3_500)).toBe(40 * 50)
    // Requests ahead come first: 1,000 pending makes 2,500 short, freed by step 100.
    expect(admissionWaitMs(memory({ pendingTokens: 1_000 }), 3_500)).toBe(100 * 50)
  })

  it('extrapolates past the tracked releases at their pace', () => {
    // 6,000 short, 4,000 freed by step 100 (40 a step): 50 steps more.
    expect(admissionWaitMs(memory(), 8_000)).toBe(150 * 50)
    // Nothing tracked: one answer's worth of steps.
    expect(admissionWaitMs(memory({ releases: () => [] }), 3_000)).toBe(256 * 50)
  })
})
