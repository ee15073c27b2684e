import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import {
  createLlmdStickyStrategy,
  LlmdStickyParameters,
  QUEUE_THRESHOLD_TOKENS,
} from '../../../../shared/routing/strategies/create-llmd-sticky-strategy.ts'
import { hashPromptBlocks } from '../../../../shared/routing/strategies/hash-prompt-blocks.ts'
import { context, expectSeededProperties, pod, request, route } from './routing-fixtures.ts'

// R_peak 4,000 tokens/s is 4 tokens/ms: with T_max 5,000 ms, τ = 20,000 tokens.
const calibration = { peakPrefillTokensPerSecond: 4_000 }
// The precise producer: a pod's hit is its cachedBlocks in the KV index.
const precise = (overrides: object = {}) =>
  LlmdStickyParameters.parse({ prefixProducer: 'precise', ...overrides })
const penalty5s = precise({ maxTtftPenaltyMs: 5_000 })
const sticky = (parameters = penalty5s) => createLlmdStickyStrategy(parameters, calibration)
const prompt = request({ promptTokens: 1000, blockSize: 16, maxTokens: 128 })
const warm = (pendingPrefillTokens: number) =>
  pod('pod-warm', { cachedBlocks: 60, load: { pendingPrefillTokens } }) // hit 960/1000
const cold = (pendingPrefillTokens = 0) => pod('pod-cold', { load: { pendingPrefillTokens } })

describe('createLlmdStickyStrategy', () => {
  it('defaults to the filter’s current values: threshold 0.8, no exploration, T_max 18 s', () => {
    expect(LlmdStickyParameters.parse({})).toEqual({
      prefixProducer: 'approximate',
      speculativeIndexing: false,
      affinityThreshold: 0.8,
      explorationProbability: 0,
      maxTtftPenaltyMs: 18_000,
      cpuTierWeight: 0.8,
      addEstimatedOutputTokens: false,
      outputRatio: 1.5,
    })
  })

  it('keeps only sticky pods while their queued prefill leads by at most τ', () => {
    // warm: 20,000 in flight = 5,000 ms; cold: 0.
    const decision = sticky().choose(prompt, [cold(), warm(20_000)], context())
    expect(decision.pod).toBe('pod-warm')
    expect(decision.scores.map((score) => score.score)).toEqual([
      null,
      1 - 20_040 / QUEUE_THRESHOLD_TOKENS,
    ])
    expect(decision.reason).toBe(
      'llmd-sticky: sticky: pod-warm 20000 tokens in flight (5000 ms) vs pod-cold 0 (0 ms), ' +
        'within 5000 ms (τ 20000 tokens); pod-warm has the least token load of the 1 kept (lookahead 20040, hit 96%)',
    )
  })

  it('breaks stickiness once the lead exceeds τ, then the least token load wins', () => {
    const decision = sticky().choose(prompt, [cold(), warm(20_004)], context())
    expect(decision.pod).toBe('pod-cold')
    expect(decision.reason).toContain(
      'stickiness broken: pod-warm 20004 tokens in flight (5001 ms) vs pod-cold 0 (0 ms), more than 5000 ms',
    )
    expect(decision.scores.map((score) => score.score)).toEqual([
      1 - 1_000 / QUEUE_THRESHOLD_TOKENS,
      1 - 20_044 / QUEUE_THRESHOLD_TOKENS,
    ])
  })

  it('gates on tokens already in flight, not on this request’s own uncached tokens', () => {
    // With the request counted (20,440 vs 1,000) the lead would be 19,440 tokens, within τ.
    expect(sticky().choose(prompt, [cold(), warm(20_400)], context()).pod).toBe('pod-cold')
  })

  it('measures the lead in time at the calibrated peak, whatever the fitted TTFT model says', () => {
    const fast = { ...calibration, peakPrefillTokensPerSecond: 8_000 } // τ = 40,000
    const pods = [cold(), warm(30_000)]
    expect(createLlmdStickyStrategy(penalty5s, fast).choose(prompt, pods, context()).pod).toBe(
      'pod-warm',
    )
    expect(sticky().choose(prompt, pods, context()).pod).toBe('pod-cold')
    const slowFit = pods.map((p) => ({ ...p, ttft: { overheadMs: 500, msPerToken: 5 } }))
    expect(createLlmdStickyStrategy(penalty5s, fast).choose(prompt, slowFit, context()).pod).toBe(
      'pod-warm',
    )
  })

  it('is sticky from the affinity threshold up (cachedBlocks·blockSize / promptTokens ≥ 0.8)', () => {
    const strategy = sticky()
    const at = pod('pod-80', { cachedBlocks: 50, load: { pendingPrefillTokens: 5_000 } }) // 800/1000
    const below = pod('pod-79', { cachedBlocks: 49, load: { pendingPrefillTokens: 5_000 } })
    expect(strategy.choose(prompt, [cold(), at], context()).pod).toBe('pod-80')
    const none = strategy.choose(prompt, [cold(), below], context())
    expect(none.pod).toBe('pod-cold')
    expect(none.reason).toContain('no sticky pod (best hit 78% < 80%)')
  })

  it('never explores by default, and ignores stickiness with an exploration probability set', () => {
    expect(
      createLlmdStickyStrategy(precise()).choose(
        prompt,
        [cold(), warm(5_000)],
        context(() => 0),
      ).pod,
    ).toBe('pod-warm')
    const exploring = sticky(precise({ explorationProbability: 0.01 }))
    const skipped = exploring.choose(
      prompt,
      [cold(), warm(5_000)],
      context(() => 0.005),
    )
    expect(skipped.pod).toBe('pod-cold')
    expect(skipped.reason).toContain('exploring (p 0.01)')
    expect(
      exploring.choose(
        prompt,
        [cold(), warm(5_000)],
        context(() => 0.01),
      ).pod,
    ).toBe('pod-warm')
  })

  it('never breaks stickiness with a penalty of 0', () => {
    const strategy = sticky(precise({ maxTtftPenaltyMs: 0 }))
    expect(strategy.choose(prompt, [cold(), warm(1_000_000)], context()).pod).toBe('pod-warm')
  })

  it('holds an output estimate per request until it ends, with addEstimatedOutputTokens', () => {
    const strategy = sticky(precise({ maxTtftPenaltyMs: 5_000, addEstimatedOutputTokens: true }))
    // min(round(1000 × 1.5), max_tokens 128) = 128 output tokens a request.
    const pods = [cold(), warm(19_900)]
    expect(strategy.choose(prompt, pods, context()).scores[1]?.score).toBe(
      1 - (19_900 + 40 + 128) / QUEUE_THRESHOLD_TOKENS,
    )
    strategy.onRouted?.(
      request({ id: 'held', promptTokens: 1000, maxTokens: 128 }),
      'pod-warm',
      context(),
      warm(0),
    )
    // 19,900 + 128 = 20,028 in flight: more than τ ahead.
    expect(strategy.choose(prompt, pods, context()).pod).toBe('pod-cold')
    strategy.onFirstToken?.('held')
    expect(strategy.choose(prompt, pods, context()).pod).toBe('pod-cold')
    strategy.onReleased?.('held')
    expect(strategy.choose(prompt, pods, context()).pod).toBe('pod-warm')
    expect(sticky().choose(prompt, pods, context()).scores[1]?.score).toBe(
      1 - 19_940 / QUEUE_THRESHOLD_TOKENS,
    )
  })

  it('spreads over several sticky pods by token load, ties at random', () => {
    const strategy = sticky()
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
    expectSeededProperties(() => createLlmdStickyStrategy(precise()))
    expectSeededProperties(() =>
      sticky(precise({ addEstimatedOutputTokens: true, explorationProbability: 0.1 })),
    )
  })
})

describe('createLlmdStickyStrategy with the approximate producer, as llm-d’s guide ships it', () => {
  const approximate = LlmdStickyParameters.parse({ maxTtftPenaltyMs: 5_000 })
  const text = 'x'.repeat(4000) // 62 character blocks of 64 and a partial one: 63
  const ask = (promptText = text) =>
    request({ promptTokens: 1000, blockSize: 16, maxTokens: 128, promptText })

  it('hashes the prompt’s characters and writes no speculative entries; the precise variant does', () => {
    const asDeployed = createLlmdStickyStrategy(approximate, calibration)
    expect(asDeployed.usesPromptText).toBe(true)
    expect(asDeployed.speculativeEntries).toBe(false)
    const helped = createLlmdStickyStrategy(precise({ speculativeIndexing: true }), calibration)
    expect(helped.usesPromptText).toBe(false)
    expect(helped.speculativeEntries).toBe(true)
    expect(sticky().speculativeEntries).toBe(false)
  })

  it('does not prefer a pod the KV index says holds the prefix but sticky never routed it to', () => {
    const pods = [cold(), warm(5_000)] // warm: 960 of 1,000 tokens in the index
    const decision = createLlmdStickyStrategy(approximate, calibration).choose(
      ask(),
      pods,
      context(),
    )
    expect(decision.pod).toBe('pod-cold')
    expect(decision.reason).toContain('no sticky pod (best hit 0% < 80%)')
    expect(sticky().choose(ask(), pods, context()).pod).toBe('pod-warm')
  })

  it('sticks to the pod it routed the prefix to, whatever the KV index says', () => {
    const strategy = createLlmdStickyStrategy(approximate, calibration)
    const idle = [pod('pod-a'), pod('pod-b')]
    const first = route(strategy, ask(), idle) as string
    const other = first === 'pod-a' ? 'pod-b' : 'pod-a'
    const busier = [pod(first, { load: { pendingPrefillTokens: 5_000 } }), pod(other)]
    const decision = strategy.choose(ask(), busier, context())
    expect(decision.pod).toBe(first)
    expect(decision.reason).toContain('hit 100%')
    // Its own uncached tokens are the unmatched share of the prompt: none here.
    expect(decision.scores.find((score) => score.pod === first)?.score).toBe(
      1 - 5_000 / QUEUE_THRESHOLD_TOKENS,
    )
    strategy.onPodRemoved?.(first)
    expect(strategy.choose(ask(), busier, context()).pod).toBe(other)
  })

  it('takes the hit as matched ÷ total character blocks, the affinity threshold applying to it', () => {
    expect(hashPromptBlocks(text, 'qwen3', 16, 256)).toHaveLength(63)
    const strategy = createLlmdStickyStrategy(approximate, calibration)
    const first = route(strategy, ask(), [pod('pod-a')]) as string
    const pods = [pod(first, { load: { pendingPrefillTokens: 5_000 } }), cold()]
    // 51 of 63 blocks shared: 81% ≥ 80%; 50 of 63: 79%.
    const shares51 = ask('x'.repeat(51 * 64) + 'y'.repeat(4000 - 51 * 64))
    expect(strategy.choose(shares51, pods, context()).pod).toBe(first)
    const shares50 = ask('x'.repeat(50 * 64) + 'y'.repeat(4000 - 50 * 64))
    const below = strategy.choose(shares50, pods, context())
    expect(below.pod).toBe('pod-cold')
    expect(below.reason).toContain('no sticky pod (best hit 79% < 80%)')
  })
})
