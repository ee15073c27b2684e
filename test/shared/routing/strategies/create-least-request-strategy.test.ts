import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import { createLeastRequestStrategy } from '../../../../shared/routing/strategies/create-least-request-strategy.ts'
import { context, expectSeededProperties, pod, request } from './routing-fixtures.ts'

describe('createLeastRequestStrategy', () => {
  it('picks the pod with the fewest requests in flight, blind to cache', () => {
    const decision = createLeastRequestStrategy().choose(
      request(),
      [
        pod('pod-a', { load: { inFlight: 5 }, cachedBlocks: 60 }),
        pod('pod-b', { load: { inFlight: 2 } }),
        pod('pod-c', { load: { inFlight: 7 } }),
      ],
      context(),
    )
    expect(decision.pod).toBe('pod-b')
    expect(decision.reason).toBe('least-request: pod-b has 2 in flight vs 5–7 on the others')
    expect(decision.scores.map((score) => score.score)).toEqual([5, 2, 7])
  })

  it('breaks ties at random, among the tied pods only', () => {
    const strategy = createLeastRequestStrategy()
    const pods = [
      pod('pod-a', { load: { inFlight: 1 } }),
      pod('pod-b', { load: { inFlight: 4 } }),
      pod('pod-c', { load: { inFlight: 1 } }),
    ]
    const random = createSeededRandom(7)
    const chosen = new Set(
      Array.from({ length: 50 }, () => strategy.choose(request(), pods, context(random)).pod),
    )
    expect(chosen).toEqual(new Set(['pod-a', 'pod-c']))
  })

  it('says when the pod is the only candidate', () => {
    const decision = createLeastRequestStrategy().choose(
      request(),
      [pod('pod-a', { load: { inFlight: 3 } })],
      context(),
    )
    expect(decision.reason).toBe('least-request: pod-a is the only candidate (3 in flight)')
  })

  it('answers no pod when there is no candidate', () => {
    expect(createLeastRequestStrategy().choose(request(), [], context()).pod).toBeNull()
  })

  it('only picks candidates, identically for a seed', () => {
    expectSeededProperties(createLeastRequestStrategy)
  })
})
