import { describe, expect, it } from 'vitest'
import {
  createSglangCacheAwareStrategy,
  SglangCacheAwareParameters,
} from '../../../../shared/routing/strategies/create-sglang-cache-aware-strategy.ts'
import { context, expectSeededProperties, pod, request, route } from './routing-fixtures.ts'

const document = 'The quick brown fox jumps over the lazy dog. '.repeat(20) // 900 chars
const loaded = (name: string, inFlight: number) => pod(name, { load: { inFlight } })

describe('createSglangCacheAwareStrategy', () => {
  it('defaults to the router launcher’s values, not the Rust struct’s', () => {
    expect(SglangCacheAwareParameters.parse({})).toEqual({
      cacheThreshold: 0.3,
      balanceAbsThreshold: 64,
      balanceRelThreshold: 1.5,
      evictionIntervalSeconds: 120,
      maxTreeSize: 2 ** 26,
    })
  })

  it('routes to the best-matching worker when the match rate is above the threshold', () => {
    const strategy = createSglangCacheAwareStrategy()
    strategy.onRouted?.(request({ promptText: document }), 'pod-b', context(), pod('pod-b'))
    const decision = strategy.choose(
      request({ promptText: `${document}Summarise.` }), // 900 of 910 chars
      [loaded('pod-a', 0), loaded('pod-b', 3)],
      context(),
    )
    expect(decision.pod).toBe('pod-b')
    expect(decision.reason).toBe('sglang-cache-aware: pod-b matches 99% of the prompt (> 30%)')
    expect(decision.scores.map((score) => score.score)).toEqual([0, 900 / 910])
  })

  it('sends a miss to the least-loaded pod, then the one routed to least, then the first', () => {
    const strategy = createSglangCacheAwareStrategy()
    strategy.onRouted?.(request({ promptText: 'x'.repeat(30) }), 'pod-a', context(), pod('pod-a'))
    // 30 of 100 characters match pod-a: 0.3 is not above 0.3.
    const miss = request({ promptText: `${'x'.repeat(30)}${'z'.repeat(70)}` })
    const busyA = strategy.choose(
      miss,
      [loaded('pod-a', 0), loaded('pod-b', 2), loaded('pod-c', 1)],
      context(),
    )
    expect(busyA.pod).toBe('pod-a')
    expect(busyA.reason).toBe(
      'sglang-cache-aware: best match 30% ≤ 30%, least loaded pod-a (0 in flight)',
    )
    // Equal loads: pod-a already had a request routed to it.
    const even = [loaded('pod-a', 1), loaded('pod-b', 1), loaded('pod-c', 1)]
    expect(strategy.choose(miss, even, context()).pod).toBe('pod-b')
    strategy.onRouted?.(request({ promptText: 'y' }), 'pod-b', context(), pod('pod-b'))
    expect(strategy.choose(miss, even, context()).pod).toBe('pod-c')
  })

  it('lets the imbalance gate override cache affinity, and still learns the prompt', () => {
    const strategy = createSglangCacheAwareStrategy()
    strategy.onRouted?.(request({ promptText: document }), 'pod-a', context(), pod('pod-a'))
    const imbalanced = [loaded('pod-a', 100), loaded('pod-b', 2), loaded('pod-c', 5)]
    const decision = strategy.choose(request({ promptText: document }), imbalanced, context())
    expect(decision.pod).toBe('pod-b')
    expect(decision.reason).toBe(
      'sglang-cache-aware: load imbalanced (in flight 2–100: gap 98 > 64 and 100 > 1.5 × 2), shortest queue pod-b',
    )
    strategy.onRouted?.(request({ promptText: document }), 'pod-b', context(), pod('pod-b'))
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
    strategy.onRouted?.(request({ promptText: document }), 'pod-a', context(), pod('pod-a'))
    const near = [loaded('pod-a', 46), loaded('pod-b', 31)] // gap 15 > 1, but 46 ≤ 1.5 × 31
    expect(strategy.choose(request({ promptText: document }), near, context()).pod).toBe('pod-a')
    const far = [loaded('pod-a', 47), loaded('pod-b', 31)] // 47 > 46.5
    expect(strategy.choose(request({ promptText: document }), far, context()).pod).toBe('pod-b')
    const defaults = createSglangCacheAwareStrategy()
    defaults.onRouted?.(request({ promptText: document }), 'pod-a', context(), pod('pod-a'))
    const gap64 = [loaded('pod-a', 72), loaded('pod-b', 8)] // gap 64 is not above 64
    expect(defaults.choose(request({ promptText: document }), gap64, context()).pod).toBe('pod-a')
  })

  it('keeps a long prompt through an eviction at the default tree size', () => {
    // A shared-prefix prompt (~17,400 characters) is larger than the struct's 10,000.
    const prompt = request({ promptText: 's'.repeat(17_400) })
    const pods = [pod('pod-a'), pod('pod-b')]
    const afterEviction = (strategy: ReturnType<typeof createSglangCacheAwareStrategy>) => {
      route(
        strategy,
        prompt,
        pods.slice(0, 1),
        context(() => 0.5, 0),
      )
      return strategy.choose(
        prompt,
        pods,
        context(() => 0.5, 121_000),
      )
    }
    expect(afterEviction(createSglangCacheAwareStrategy()).pod).toBe('pod-a')
    const small = SglangCacheAwareParameters.parse({ maxTreeSize: 10_000 })
    expect(afterEviction(createSglangCacheAwareStrategy(small)).reason).toContain('best match 0%')
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
    const busy = [loaded('pod-a', 100), loaded('pod-b', 0)]
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
    strategy.onRouted?.(
      request({ model: 'm1', promptText: document }),
      'pod-a',
      context(),
      pod('pod-a'),
    )
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
