import { describe, expect, it } from 'vitest'
import { LlmdStickyParameters } from '../../../../shared/crd/routing-strategy.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import {
  createLlmdStickyStrategy,
  QUEUE_THRESHOLD_TOKENS,
} from '../../../../shared/routing/strategies/create-llmd-sticky-strategy.ts'
import { context, expectSeededProperties, pod, request } from './routing-fixtures.ts'

// 0.25 ms per token is a peak prefill of 4 tokens/ms: τ = 4 × 5,000 ms = 20,000 tokens.
const prompt = request({ promptTokens: 1000, blockSize: 16 })
const warm = (pendingPrefillTokens: number) =>
  pod('pod-warm', { cachedBlocks: 60, load: { pendingPrefillTokens } }) // hit 960/1000
const cold = (pendingPrefillTokens = 0) => pod('pod-cold', { load: { pendingPrefillTokens } })

describe('createLlmdStickyStrategy', () => {
  it('keeps only sticky pods while the lookahead gap stays within τ', () => {
    // warm: 20,960 + 40 uncached = 21,000 tokens = 5,250 ms; cold: 1,000 = 250 ms; gap 5,000 ms.
    const decision = createLlmdStickyStrategy().choose(prompt, [cold(), warm(20_960)], context())
    expect(decision.pod).toBe('pod-warm')
    expect(decision.scores.map((score) => score.score)).toEqual([
      null,
      1 - 21_000 / QUEUE_THRESHOLD_TOKENS,
    ])
    expect(decision.reason).toBe(
      'llmd-sticky: sticky: pod-warm 21000 tokens ahead (5250 ms) vs pod-cold 1000 (250 ms), ' +
        'within 5000 ms (τ ≈ 20000 tokens); pod-warm has the least token load of the 1 kept (lookahead 21000, hit 96%)',
    )
  })

  it('breaks stickiness once the gap exceeds τ, then the least token load wins', () => {
    const decision = createLlmdStickyStrategy().choose(prompt, [cold(), warm(20_964)], context())
    expect(decision.pod).toBe('pod-cold')
    expect(decision.reason).toContain('stickiness broken: pod-warm 21004 tokens ahead (5251 ms)')
    expect(decision.scores.map((score) => score.score)).toEqual([
      1 - 1_000 / QUEUE_THRESHOLD_TOKENS,
      1 - 21_004 / QUEUE_THRESHOLD_TOKENS,
    ])
  })

  it('compares predicted TTFTs, so a faster sticky pod stays sticky longer', () => {
    const fast = pod('pod-warm', {
      cachedBlocks: 60,
      load: { pendingPrefillTokens: 30_000 },
      ttft: { overheadMs: 20, msPerToken: 0.1 }, // 30,040 × 0.1 = 3,004 ms
    })
    expect(createLlmdStickyStrategy().choose(prompt, [cold(), fast], context()).pod).toBe(
      'pod-warm',
    )
  })

  it('is sticky from the affinity threshold up (cachedBlocks·blockSize / promptTokens ≥ 0.8)', () => {
    const strategy = createLlmdStickyStrategy()
    const at = pod('pod-80', { cachedBlocks: 50, load: { pendingPrefillTokens: 5_000 } }) // 800/1000
    const below = pod('pod-79', { cachedBlocks: 49, load: { pendingPrefillTokens: 5_000 } })
    expect(strategy.choose(prompt, [cold(), at], context()).pod).toBe('pod-80')
    const none = strategy.choose(prompt, [cold(), below], context())
    expect(none.pod).toBe('pod-cold')
    expect(none.reason).toContain('no sticky pod (best hit 78% < 80%)')
  })

  it('ignores stickiness with the exploration probability', () => {
    const exploring = createLlmdStickyStrategy().choose(
      prompt,
      [cold(), warm(5_000)],
      context(() => 0.005),
    )
    expect(exploring.pod).toBe('pod-cold')
    expect(exploring.reason).toContain('exploring (p 0.01)')
    const sticking = createLlmdStickyStrategy().choose(
      prompt,
      [cold(), warm(5_000)],
      context(() => 0.01),
    )
    expect(sticking.pod).toBe('pod-warm')
  })

  it('never breaks stickiness with a penalty of 0', () => {
    const strategy = createLlmdStickyStrategy(LlmdStickyParameters.parse({ maxTtftPenaltyMs: 0 }))
    expect(strategy.choose(prompt, [cold(), warm(1_000_000)], context()).pod).toBe('pod-warm')
  })

  it('spreads over several sticky pods by token load, ties at random', () => {
    const strategy = createLlmdStickyStrategy()
    const pods = [
      pod('pod-a', { cachedBlocks: 62, load: { pendingPrefillTokens: 300 } }),
      pod('pod-b', { cachedBlocks: 62, load: { pendingPrefillTokens: 300 } }),
      pod('pod-c', { cachedBlocks: 62, load: { pendingPrefillTokens: 900 } }),
      cold(),
    ]
    const random = createSeededRandom(3)
    const chosen = new Set(
      Array.from({ length: 40 }, () => strategy.choose(prompt, pods, context(random)).pod),
    )
    expect(chosen).toEqual(new Set(['pod-a', 'pod-b']))
  })

  it('answers no pod when there is no candidate', () => {
    expect(createLlmdStickyStrategy().choose(prompt, [], context()).pod).toBeNull()
  })

  it('only picks candidates, identically for a seed', () => {
    expectSeededProperties(createLlmdStickyStrategy)
  })
})
