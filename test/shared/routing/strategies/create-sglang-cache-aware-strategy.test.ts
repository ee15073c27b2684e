import { describe, expect, it } from 'vitest'
import { SglangCacheAwareParameters } from '../../../../shared/crd/routing-strategy.ts'
import { createSglangCacheAwareStrategy } from '../../../../shared/routing/strategies/create-sglang-cache-aware-strategy.ts'
import { context, expectSeededProperties, pod, request, route } from './routing-fixtures.ts'

const document = 'The quick brown fox jumps over the lazy dog. '.repeat(20) // 900 chars
const loaded = (name: string, inFlight: number) => pod(name, { load: { inFlight } })

describe('createSglangCacheAwareStrategy', () => {
  it('routes to the best-matching worker when the match rate is above the threshold', () => {
    const strategy = createSglangCacheAwareStrategy()
    strategy.onRouted?.(request({ promptText: document }), 'pod-b', context())
    const decision = strategy.choose(
      request({ promptText: `${document}Summarise.` }), // 900 of 910 chars
      [loaded('pod-a', 0), loaded('pod-b', 3)],
      context(),
    )
    expect(decision.pod).toBe('pod-b')
    expect(decision.reason).toBe('sglang-cache-aware: pod-b matches 99% of the prompt (> 50%)')
    expect(decision.scores.map((score) => score.score)).toEqual([0, 900 / 910])
  })

  it('falls back to the smallest tree at or below the threshold', () => {
    const strategy = createSglangCacheAwareStrategy()
    const pods = [pod('pod-a'), pod('pod-b'), pod('pod-c')]
    strategy.onRouted?.(request({ promptText: 'x'.repeat(50) }), 'pod-a', context())
    strategy.onRouted?.(request({ promptText: 'y'.repeat(20) }), 'pod-b', context())
    // Half the prompt matches pod-a: 0.5 is not above 0.5.
    const half = strategy.choose(
      request({ promptText: `${'x'.repeat(50)}${'z'.repeat(50)}` }),
      pods,
      context(),
    )
    expect(half.pod).toBe('pod-c')
    expect(half.reason).toBe(
      'sglang-cache-aware: best match 50% ≤ 50%, pod-c has the smallest tree (0 chars)',
    )
    const withoutC = strategy.choose(
      request({ promptText: 'new topic' }),
      pods.slice(0, 2),
      context(),
    )
    expect(withoutC.pod).toBe('pod-b')
  })

  it('lets the imbalance gate override cache affinity, and still learns the prompt', () => {
    const strategy = createSglangCacheAwareStrategy()
    strategy.onRouted?.(request({ promptText: document }), 'pod-a', context())
    const imbalanced = [loaded('pod-a', 40), loaded('pod-b', 2), loaded('pod-c', 5)]
    const decision = strategy.choose(request({ promptText: document }), imbalanced, context())
    expect(decision.pod).toBe('pod-b')
    expect(decision.reason).toBe(
      'sglang-cache-aware: load imbalanced (in flight 2–40: gap 38 > 32 and 40 > 1.1 × 2), shortest queue pod-b',
    )
    strategy.onRouted?.(request({ promptText: document }), 'pod-b', context())
    const balanced = strategy.choose(
      request({ promptText: document }),
      [loaded('pod-a', 3), loaded('pod-b', 3)],
      context(),
    )
    expect(balanced.scores.map((score) => score.score)).toEqual([1, 1])
  })

  it('needs both the absolute and the relative imbalance', () => {
    const strategy = createSglangCacheAwareStrategy(
      SglangCacheAwareParameters.parse({ balanceAbsThreshold: 1 }),
    )
    strategy.onRouted?.(request({ promptText: document }), 'pod-a', context())
    const near = [loaded('pod-a', 33), loaded('pod-b', 31)] // gap 2 > 1, but 33 ≤ 1.1 × 31
    expect(strategy.choose(request({ promptText: document }), near, context()).pod).toBe('pod-a')
    const far = [loaded('pod-a', 35), loaded('pod-b', 31)] // 35 > 34.1
    expect(strategy.choose(request({ promptText: document }), far, context()).pod).toBe('pod-b')
    const defaults = createSglangCacheAwareStrategy()
    defaults.onRouted?.(request({ promptText: document }), 'pod-a', context())
    const gap32 = [loaded('pod-a', 40), loaded('pod-b', 8)] // gap 32 is not above 32
    expect(defaults.choose(request({ promptText: document }), gap32, context()).pod).toBe('pod-a')
  })

  it('evicts lazily once per interval, least recently used first, down to maxTreeSize', () => {
    const strategy = createSglangCacheAwareStrategy(
      SglangCacheAwareParameters.parse({ maxTreeSize: 1_500, evictionIntervalSeconds: 30 }),
    )
    const older = 'o'.repeat(1_000)
    const newer = 'n'.repeat(1_000)
    const pods = [pod('pod-a'), pod('pod-b')]
    route(
      strategy,
      request({ promptText: older }),
      pods.slice(0, 1),
      context(() => 0.5, 0),
    )
    route(
      strategy,
      request({ promptText: newer }),
      pods.slice(0, 1),
      context(() => 0.5, 10_000),
    )
    // Imbalanced, so the tree is read without refreshing anything: both prompts still held.
    const busy = [loaded('pod-a', 40), loaded('pod-b', 0)]
    const early = strategy.choose(
      request({ promptText: older }),
      busy,
      context(() => 0.5, 29_999),
    )
    expect(early.scores.map((score) => score.score)).toEqual([1, 0])
    const late = strategy.choose(
      request({ promptText: older }),
      pods,
      context(() => 0.5, 40_000),
    )
    expect(late.pod).toBe('pod-b')
    expect(late.reason).toContain('best match 0%')
    expect(
      strategy.choose(
        request({ promptText: newer }),
        pods,
        context(() => 0.5, 40_001),
      ).pod,
    ).toBe('pod-a')
  })

  it('keeps one tree per model and forgets a removed pod', () => {
    const strategy = createSglangCacheAwareStrategy()
    strategy.onRouted?.(request({ model: 'm1', promptText: document }), 'pod-a', context())
    const pods = [pod('pod-b'), pod('pod-a')]
    expect(
      strategy.choose(request({ model: 'm1', promptText: document }), pods, context()).pod,
    ).toBe('pod-a')
    expect(
      strategy.choose(request({ model: 'm2', promptText: document }), pods, context()).pod,
    ).toBe('pod-b')
    strategy.onPodRemoved?.('pod-a')
    expect(
      strategy.choose(request({ model: 'm1', promptText: document }), pods, context()).pod,
    ).toBe('pod-b')
  })

  it('answers no pod when there is no candidate', () => {
    expect(createSglangCacheAwareStrategy().choose(request(), [], context()).pod).toBeNull()
  })

  it('only picks candidates, identically for a seed', () => {
    expectSeededProperties(createSglangCacheAwareStrategy)
  })
})
