import { describe, expect, it } from 'vitest'
import { createRoundRobinStrategy } from '../../../../shared/routing/strategies/create-round-robin-strategy.ts'
import { context, expectSeededProperties, pod, request } from './routing-fixtures.ts'

describe('createRoundRobinStrategy', () => {
  it('cycles over the candidates whatever their load or cache', () => {
    const strategy = createRoundRobinStrategy()
    const pods = [
      pod('pod-a', { load: { inFlight: 50 } }),
      pod('pod-b', { cachedBlocks: 60 }),
      pod('pod-c'),
    ]
    const chosen = Array.from({ length: 7 }, () => strategy.choose(request(), pods, context()).pod)
    expect(chosen).toEqual(['pod-a', 'pod-b', 'pod-c', 'pod-a', 'pod-b', 'pod-c', 'pod-a'])
  })

  it('explains the turn and reports cached tokens without a score', () => {
    const decision = createRoundRobinStrategy().choose(
      request({ blockSize: 16 }),
      [pod('pod-a', { cachedBlocks: 3 }), pod('pod-b')],
      context(),
    )
    expect(decision.reason).toBe('round-robin: pod-a is next in turn (1 of 2)')
    expect(decision.scores).toEqual([
      { pod: 'pod-a', cachedTokens: 48, predictedTtftMs: null, score: null },
      { pod: 'pod-b', cachedTokens: 0, predictedTtftMs: null, score: null },
    ])
  })

  it('keeps turning when the candidate list shrinks', () => {
    const strategy = createRoundRobinStrategy()
    strategy.choose(request(), [pod('pod-a'), pod('pod-b'), pod('pod-c')], context())
    expect(strategy.choose(request(), [pod('pod-a'), pod('pod-c')], context()).pod).toBe('pod-c')
    expect(strategy.choose(request(), [pod('pod-a'), pod('pod-c')], context()).pod).toBe('pod-a')
  })

  it('answers no pod when there is no candidate', () => {
    expect(createRoundRobinStrategy().choose(request(), [], context())).toEqual({
      pod: null,
      reason: 'round-robin: no candidate pod',
      scores: [],
    })
  })

  it('only picks candidates, identically for a seed', () => {
    expectSeededProperties(createRoundRobinStrategy)
  })
})
