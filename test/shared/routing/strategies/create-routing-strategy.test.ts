import { describe, expect, it } from 'vitest'
import { RoutingSpec } from '../../../../shared/crd/routing-spec.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { createRoutingStrategy } from '../../../../shared/routing/strategies/create-routing-strategy.ts'
import { blockKeys, context, pod, request } from './routing-fixtures.ts'

const peers = [
  'round-robin',
  'least-request',
  'gie-default',
  'llmd-sticky',
  'dynamo',
  'sglang-cache-aware',
] as const

function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

describe('createRoutingStrategy', () => {
  it.each(peers)('creates %s with its published defaults', (name) => {
    const strategy = createRoutingStrategy(name)
    expect(strategy.name).toBe(name)
    const decision = strategy.choose(request(), [pod('pod-a'), pod('pod-b')], context())
    expect(decision.reason.startsWith(`${name}: `)).toBe(true)
  })

  it('returns a fresh instance, with its own state, on every call', () => {
    const first = createRoutingStrategy('round-robin')
    const second = createRoutingStrategy('round-robin')
    const pods = [pod('pod-a'), pod('pod-b')]
    first.choose(request(), pods, context())
    expect(second.choose(request(), pods, context()).pod).toBe('pod-a')
  })

  it('takes a pool’s parsed routing spec as it is', () => {
    const routing = RoutingSpec.parse({ strategy: 'dynamo', dynamo: { prefillLoadScale: 0 } })
    const strategy = createRoutingStrategy(routing.strategy, routing)
    const decision = strategy.choose(
      request({ promptTokens: 320, blockKeys: blockKeys(['p', 20]) }),
      [pod('pod-a', { cachedBlocks: 4 }), pod('pod-b')],
      context(),
    )
    // prefill is weighted 0: only the 20 new blocks count on either pod.
    expect(decision.scores.map((score) => score.score)).toEqual([20, 20])
    const lmetric = RoutingSpec.parse({
      strategy: 'dynamo',
      dynamo: { selectionPolicy: 'lmetric' },
    })
    const product = createRoutingStrategy(lmetric.strategy, lmetric).choose(
      request({ promptTokens: 320, blockKeys: blockKeys(['p', 20]) }),
      [pod('pod-a', { cachedBlocks: 4 }), pod('pod-b')],
      context(),
    )
    expect(product.scores.map((score) => score.score)).toEqual([16 * 21, 20 * 21])
  })

  it('gives llm-d the pool’s calibrated peak prefill, unless its own parameter names one', () => {
    const pool = { stepBudget: 2048, peakPrefillTokensPerSecond: 2_000 }
    // T_max 1 s: τ = 2,000 tokens at the pool's peak, 10,000 at the parameter's.
    const pods = [
      pod('pod-cold'),
      pod('pod-warm', { cachedBlocks: 60, load: { pendingPrefillTokens: 5_000 } }),
    ]
    const calibrated = createRoutingStrategy(
      'llmd-sticky',
      { llmdSticky: { prefixProducer: 'precise', maxTtftPenaltyMs: 1_000 } },
      pool,
    )
    expect(calibrated.choose(request({ promptTokens: 1000 }), pods, context()).pod).toBe('pod-cold')
    const named = createRoutingStrategy(
      'llmd-sticky',
      {
        llmdSticky: {
          prefixProducer: 'precise',
          maxTtftPenaltyMs: 1_000,
          peakPrefillTokensPerSecond: 10_000,
        },
      },
      pool,
    )
    expect(named.choose(request({ promptTokens: 1000 }), pods, context()).pod).toBe('pod-warm')
  })

  it('applies defaults to a partial block', () => {
    const strategy = createRoutingStrategy('llmd-sticky', {
      llmdSticky: { prefixProducer: 'precise', maxTtftPenaltyMs: 0 },
    })
    const decision = strategy.choose(
      request({ promptTokens: 1000 }),
      [
        pod('pod-cold'),
        pod('pod-warm', { cachedBlocks: 60, load: { pendingPrefillTokens: 10 ** 7 } }),
      ],
      context(),
    )
    expect(decision.pod).toBe('pod-warm')
  })

  it('refuses invalid parameters and another strategy’s block as invalid_config', () => {
    const invalid = thrown(() => createRoutingStrategy('dynamo', { dynamo: { temperature: -1 } }))
    expect(KinfError.isInstance(invalid) && invalid.code).toBe('invalid_config')
    expect(String(invalid)).toContain('temperature')
    const misplaced = thrown(() => createRoutingStrategy('gie-default', { dynamo: {} }))
    expect(KinfError.isInstance(misplaced) && misplaced.code).toBe('invalid_config')
    expect(thrown(() => createRoutingStrategy('round-robin', { gieDefault: {} }))).toBeDefined()
    const unknown = thrown(() => createRoutingStrategy('dynamo-lmetric'))
    expect(KinfError.isInstance(unknown) && unknown.code).toBe('invalid_config')
    expect(String(unknown)).toContain('sglang-cache-aware')
  })

  it('builds kinference like any other strategy, with the pool’s step budget', () => {
    const strategy = createRoutingStrategy(
      'kinference',
      { kinference: { copyHeadroom: 0.5 } },
      { stepBudget: 4096, peakPrefillTokensPerSecond: 8_000 },
    )
    expect(strategy.name).toBe('kinference')
    const decision = strategy.choose(request(), [pod('a'), pod('b')], context())
    expect(['a', 'b']).toContain(decision.pod)
    const misplaced = thrown(() => createRoutingStrategy('kinference', { dynamo: {} }))
    expect(KinfError.isInstance(misplaced) && misplaced.code).toBe('invalid_config')
    const invalid = thrown(() =>
      createRoutingStrategy('kinference', { kinference: { copyHeadroom: 2 } }),
    )
    expect(KinfError.isInstance(invalid) && invalid.code).toBe('invalid_config')
  })
})
