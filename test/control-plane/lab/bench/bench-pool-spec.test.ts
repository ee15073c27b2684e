import { describe, expect, it } from 'vitest'
import {
  benchPoolSpec,
  benchRouterNames,
} from '../../../../control-plane/lab/bench/bench-pool-spec.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { builtinStrategies } from '../../../../shared/routing/strategies/strategy-registry.ts'

const strategyNames = builtinStrategies.map((strategy) => strategy.name)

describe('benchRouterNames', () => {
  it('lists every strategy and variant, baselines first and kinference last', () => {
    expect(benchRouterNames).toEqual([
      'round-robin',
      'least-request',
      'gie-default',
      'llmd-sticky',
      'llmd-sticky-precise',
      'dynamo',
      'dynamo-lmetric',
      'dynamo-speculative',
      'sglang-cache-aware',
      'kinference',
    ])
    for (const strategy of strategyNames) expect(benchRouterNames).toContain(strategy)
  })
})

describe('benchPoolSpec', () => {
  it('runs a strategy with its published defaults: no parameter block', () => {
    for (const router of strategyNames) {
      const { routing } = benchPoolSpec(router, 'l40s-27b-fp8')
      expect(routing.strategy).toBe(router)
      expect(Object.keys(routing)).toEqual(['strategy'])
    }
  })

  it('runs dynamo-lmetric as Dynamo with the lmetric selection policy and its other defaults', () => {
    const { routing } = benchPoolSpec('dynamo-lmetric', 'l40s-27b-fp8')
    expect(routing.strategy).toBe('dynamo')
    expect(routing.dynamo).toEqual({
      overlapScoreCredit: 1,
      hostCacheHitWeight: 0.75,
      prefillLoadScale: 1,
      temperature: 0,
      selectionPolicy: 'lmetric',
      speculativeEntries: false,
    })
  })

  it('runs dynamo-speculative as Dynamo with speculative entries and its other defaults', () => {
    const { routing } = benchPoolSpec('dynamo-speculative', 'l40s-27b-fp8')
    expect(routing.strategy).toBe('dynamo')
    expect(routing.dynamo).toMatchObject({ selectionPolicy: 'default', speculativeEntries: true })
  })

  it('runs llmd-sticky-precise on the precise index with speculative indexing', () => {
    const { routing } = benchPoolSpec('llmd-sticky-precise', 'l40s-27b-fp8')
    expect(routing.strategy).toBe('llmd-sticky')
    expect(routing.llmdSticky).toMatchObject({
      prefixProducer: 'precise',
      speculativeIndexing: true,
      affinityThreshold: 0.8,
    })
  })

  it('refuses an unknown router, naming the known ones', () => {
    let error: unknown
    try {
      benchPoolSpec('dynamo-lmetrik', 'l40s-27b-fp8')
    } catch (thrown) {
      error = thrown
    }
    expect(KinfError.isInstance(error) && error.code).toBe('invalid_request')
    expect(String(error)).toContain('dynamo-lmetric')
  })
})
