import { describe, expect, it } from 'vitest'
import { createMemoryTierHoldings } from '../../../shared/kv-index/memory-tier-holdings.ts'
import { describeTierHoldingsConformance } from '../../support/kv-index/tier-holdings-conformance.ts'

describeTierHoldingsConformance('memory', async () =>
  createMemoryTierHoldings({ maxHashesPerTier: 64, maxTiersPerPod: 3 }),
)

describe('createMemoryTierHoldings', () => {
  it('refuses limits that are not positive integers', () => {
    expect(() => createMemoryTierHoldings({ maxTiersPerPod: 0 })).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: 'tier holdings: maxTiersPerPod must be a positive integer',
      }),
    )
  })
})
