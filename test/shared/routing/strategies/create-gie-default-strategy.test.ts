import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import {
  createGieDefaultStrategy,
  GieDefaultParameters,
} from '../../../../shared/routing/strategies/create-gie-default-strategy.ts'
import { context, expectSeededProperties, pod, request, route } from './routing-fixtures.ts'

const metrics = (waiting: number, kvCacheUsage: number) => ({
  running: 0,
  waiting,
  kvCacheUsage,
  ageMs: 10,
})
const systemPrompt = 'You are a support agent for ACME. Answer briefly and politely, always.'

describe('createGieDefaultStrategy', () => {
  it('sums queue ×2, kv-util ×2 and approximate prefix ×3, then takes the maximum', () => {
    const strategy = createGieDefaultStrategy()
    const text = 'p'.repeat(256) // four 64-byte blocks
    strategy.onRouted?.(request({ promptText: text }), 'pod-c', context(), pod('pod-c'))
    const decision = strategy.choose(
      request({ promptText: text }),
      [
        pod('pod-a', { metrics: metrics(0, 0.5) }),
        pod('pod-b', { metrics: metrics(4, 0.2) }),
        pod('pod-c', { metrics: metrics(2, 0.9) }),
      ],
      context(),
    )
    // queue (4 − q)/4 = 1, 0, 0.5; kv-util 0.5, 0.8, 0.1; prefix 0, 0, 4/4.
    const [a, b, c] = decision.scores.map((score) => score.score)
    expect(a).toBeCloseTo(2 * 1 + 2 * 0.5, 12)
    expect(b).toBeCloseTo(2 * 0 + 2 * 0.8, 12)
    expect(c).toBeCloseTo(2 * 0.5 + 2 * 0.1 + 3 * 1, 12)
    expect(decision.pod).toBe('pod-c')
    expect(decision.reason).toBe(
      'gie-default: pod-c scored 4.20 (queue 0.50, kv-util 0.10, prefix 1.00 = 4/4 char blocks) vs 1.60–3.00 on the others',
    )
  })

  it('scores every queue 1.0 when all queues are equal', () => {
    const decision = createGieDefaultStrategy().choose(
      request(),
      [pod('pod-a', { metrics: metrics(3, 0.25) }), pod('pod-b', { metrics: metrics(3, 0.75) })],
      context(),
    )
    expect(decision.scores.map((score) => score.score)).toEqual([2 + 1.5, 2 + 0.5])
  })

  it('prefers the pod it sent the same prefix to, learning only from its own decisions', () => {
    const strategy = createGieDefaultStrategy()
    const pods = [pod('pod-a'), pod('pod-b'), pod('pod-c')]
    const first = route(strategy, request({ promptText: `${systemPrompt} first question` }), pods)
    expect(first).not.toBeNull()
    for (let i = 0; i < 5; i++) {
      const next = request({ promptText: `${systemPrompt} question ${i}` })
      expect(strategy.choose(next, pods, context(createSeededRandom(i))).pod).toBe(first)
    }
    // The real cache (cachedBlocks) plays no part: only the strategy's own index does.
    const other = pods.map((p) => ({ ...p, cachedBlocks: p.name === first ? 0 : 60 }))
    expect(strategy.choose(request({ promptText: systemPrompt }), other, context()).pod).toBe(first)
  })

  it('inflates a short prompt’s match ratio (GIE #2561): one shared block scores like a full match', () => {
    const strategy = createGieDefaultStrategy()
    const head = 'h'.repeat(64)
    const first = request({ promptText: `${head}${'a'.repeat(576)}` })
    strategy.onRouted?.(first, 'pod-a', context(), pod('pod-a'))
    const pods = [pod('pod-a'), pod('pod-b')]
    const short = strategy.choose(request({ promptText: head }), pods, context())
    expect(short.scores.map((score) => score.score)).toEqual([2 + 2 + 3 * 1, 2 + 2])
    // One byte more is a partial second block, which GIE hashes too: half a match.
    const partial = strategy.choose(request({ promptText: `${head}?` }), pods, context())
    expect(partial.scores.map((score) => score.score)).toEqual([2 + 2 + 3 * 0.5, 2 + 2])
    const long = strategy.choose(
      request({ promptText: `${head}${'b'.repeat(576)}` }),
      pods,
      context(),
    )
    expect(long.scores[0]?.score).toBeCloseTo(2 + 2 + 3 * 0.1, 12)
  })

  it('has no prefix signal for a prompt shorter than one block', () => {
    const strategy = createGieDefaultStrategy()
    strategy.onRouted?.(request({ promptText: 'hi' }), 'pod-a', context(), pod('pod-a'))
    const decision = strategy.choose(
      request({ promptText: 'hi' }),
      [pod('pod-a'), pod('pod-b')],
      context(),
    )
    expect(decision.scores.map((score) => score.score)).toEqual([4, 4])
    expect(decision.reason).toContain('prefix 0.00 = 0/0 char blocks')
  })

  it('scores a pod with null metrics on its last metrics, or as never scraped (idle)', () => {
    const strategy = createGieDefaultStrategy()
    strategy.choose(
      request(),
      [pod('pod-a', { metrics: metrics(10, 0.9) }), pod('pod-b', { metrics: metrics(0, 0) })],
      context(),
    )
    const stale = strategy.choose(
      request(),
      [pod('pod-a', { metrics: null }), pod('pod-b', { metrics: metrics(5, 0.5) })],
      context(),
    )
    expect(stale.scores.map((score) => score.score)).toEqual([0 + 2 * (1 - 0.9), 2 + 1])
    expect(stale.pod).toBe('pod-b')
    const fresh = strategy.choose(
      request(),
      [pod('pod-b', { metrics: metrics(5, 0.5) }), pod('pod-new', { metrics: null })],
      context(),
    )
    expect(fresh.scores.map((score) => score.score)).toEqual([1, 4])
    expect(fresh.pod).toBe('pod-new')
    expect(fresh.reason).toContain('metrics stale: last seen')
  })

  it('forgets the prefixes of a removed pod', () => {
    const strategy = createGieDefaultStrategy()
    const promptText = 'r'.repeat(200)
    strategy.onRouted?.(request({ promptText }), 'pod-a', context(), pod('pod-a'))
    strategy.onPodRemoved?.('pod-a')
    const decision = strategy.choose(
      request({ promptText }),
      [pod('pod-a'), pod('pod-b')],
      context(),
    )
    expect(decision.scores.map((score) => score.score)).toEqual([4, 4])
  })

  it('breaks ties at random (shuffle, then sort)', () => {
    const strategy = createGieDefaultStrategy()
    const random = createSeededRandom(11)
    const chosen = new Set(
      Array.from(
        { length: 40 },
        () => strategy.choose(request(), [pod('pod-a'), pod('pod-b')], context(random)).pod,
      ),
    )
    expect(chosen).toEqual(new Set(['pod-a', 'pod-b']))
  })

  it('takes its weights from the parameters', () => {
    const strategy = createGieDefaultStrategy({
      queueWeight: 0,
      kvCacheUtilWeight: 1,
      prefixWeight: 0,
      autoTune: false,
      lruCapacityPerServer: 10,
      maxPrefixBlocksToMatch: 4,
    })
    const decision = strategy.choose(
      request(),
      [pod('pod-a', { metrics: metrics(0, 0.6) }), pod('pod-b', { metrics: metrics(9, 0.2) })],
      context(),
    )
    expect(decision.pod).toBe('pod-b')
    expect(decision.scores[1]?.score).toBeCloseTo(0.8, 12)
  })

  it('sizes each pod’s index from its KV blocks (autoTune), else from lruCapacityPerServer', () => {
    const text = 'k'.repeat(256) // four blocks
    const pods = [pod('pod-a'), pod('pod-b')]
    // 48 KV tokens are 3 blocks of 16: the first of the four is forgotten, and with it the match.
    const small = pod('pod-a', {
      memory: {
        capacityTokens: 48,
        usedTokens: 0,
        pendingTokens: 0,
        stepMs: 30,
        msPerContextToken: 2e-4,
        releases: () => [],
      },
    })
    const tuned = createGieDefaultStrategy()
    tuned.onRouted?.(request({ promptText: text }), 'pod-a', context(), small)
    expect(tuned.choose(request({ promptText: text }), pods, context()).scores[0]?.score).toBe(4)
    const fixed = createGieDefaultStrategy(GieDefaultParameters.parse({ autoTune: false }))
    fixed.onRouted?.(request({ promptText: text }), 'pod-a', context(), small)
    expect(fixed.choose(request({ promptText: text }), pods, context()).scores[0]?.score).toBe(7)
    // Capacity unknown: lruCapacityPerServer.
    const unknown = createGieDefaultStrategy(
      GieDefaultParameters.parse({ lruCapacityPerServer: 3 }),
    )
    unknown.onRouted?.(request({ promptText: text }), 'pod-a', context(), pod('pod-a'))
    expect(unknown.choose(request({ promptText: text }), pods, context()).scores[0]?.score).toBe(4)
  })

  it('answers no pod when there is no candidate', () => {
    expect(createGieDefaultStrategy().choose(request(), [], context()).pod).toBeNull()
  })

  it('only picks candidates, identically for a seed', () => {
    expectSeededProperties(createGieDefaultStrategy)
  })
})
