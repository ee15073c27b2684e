import { describe, expect, it } from 'vitest'
import { DynamoParameters } from '../../../../shared/crd/routing-strategy.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import {
  createDynamoStrategy,
  dynamoCost,
  softmaxProbabilities,
} from '../../../../shared/routing/strategies/create-dynamo-strategy.ts'
import { context, expectSeededProperties, pod, request } from './routing-fixtures.ts'

// 320 prompt tokens = 20 blocks of 16.
const prompt = request({ promptTokens: 320, blockSize: 16 })
// a: prefill 10 + 20 − 15 = 15, decode 800/16 = 50 → 65
// b: prefill 0 + 20 − 0 = 20, decode 1,600/16 = 100 → 120
// c: prefill 30 + 20 − 20 = 30, decode 0 → 30
const pods = [
  pod('pod-a', { cachedBlocks: 15, load: { pendingPrefillTokens: 160, activeTokens: 800 } }),
  pod('pod-b', { cachedBlocks: 0, load: { pendingPrefillTokens: 0, activeTokens: 1_600 } }),
  pod('pod-c', { cachedBlocks: 20, load: { pendingPrefillTokens: 480, activeTokens: 0 } }),
]
const defaults = DynamoParameters.parse({})

describe('dynamoCost', () => {
  it('is prefill_load_scale × max(active + incoming − credit × overlap, 0) + decode blocks', () => {
    expect(pods.map((p) => dynamoCost(prompt, p, defaults))).toEqual([
      { prefillBlocks: 15, decodeBlocks: 50, cost: 65 },
      { prefillBlocks: 20, decodeBlocks: 100, cost: 120 },
      { prefillBlocks: 30, decodeBlocks: 0, cost: 30 },
    ])
    const scaled = DynamoParameters.parse({ prefillLoadScale: 2, overlapScoreCredit: 0.5 })
    // a: 2 × (30 − 7.5) + 50 = 95; c: 2 × (50 − 10) + 0 = 80
    expect(dynamoCost(prompt, pods[0] ?? pod('x'), scaled).cost).toBe(95)
    expect(dynamoCost(prompt, pods[2] ?? pod('x'), scaled).cost).toBe(80)
  })

  it('never lets cached blocks make the prefill term negative, and keeps fractional blocks', () => {
    const overCached = pod('pod', { cachedBlocks: 40, load: { activeTokens: 8 } })
    expect(dynamoCost(prompt, overCached, defaults)).toEqual({
      prefillBlocks: 0,
      decodeBlocks: 0.5,
      cost: 0.5,
    })
  })
})

describe('softmaxProbabilities', () => {
  it('weighs exp(−normalised cost / temperature), uniform when all costs are equal', () => {
    const [a, b, c] = softmaxProbabilities([65, 120, 30], 1)
    const sum = Math.exp(-35 / 90) + Math.exp(-1) + 1
    expect(a).toBeCloseTo(Math.exp(-35 / 90) / sum, 12)
    expect(b).toBeCloseTo(Math.exp(-1) / sum, 12)
    expect(c).toBeCloseTo(1 / sum, 12)
    expect(softmaxProbabilities([7, 7], 0.5)).toEqual([0.5, 0.5])
  })
})

describe('createDynamoStrategy', () => {
  it('picks the lowest cost and explains its terms', () => {
    const decision = createDynamoStrategy().choose(prompt, pods, context())
    expect(decision.pod).toBe('pod-c')
    expect(decision.scores.map((score) => score.score)).toEqual([65, 120, 30])
    expect(decision.scores.map((score) => score.cachedTokens)).toEqual([240, 0, 320])
    expect(decision.reason).toBe(
      'dynamo: pod-c lowest cost, 30.0 blocks (1 × prefill 30.0 + decode 0.0) vs 65.0–120.0 on the others',
    )
  })

  it('samples with softmax over normalised costs when the temperature is above 0', () => {
    // probabilities a 0.3313, b 0.1798, c 0.4888 (cumulative 0.3313, 0.5112, 1)
    const strategy = createDynamoStrategy(DynamoParameters.parse({ temperature: 1 }))
    expect(
      strategy.choose(
        prompt,
        pods,
        context(() => 0.3),
      ).pod,
    ).toBe('pod-a')
    expect(
      strategy.choose(
        prompt,
        pods,
        context(() => 0.4),
      ).pod,
    ).toBe('pod-b')
    const last = strategy.choose(
      prompt,
      pods,
      context(() => 0.6),
    )
    expect(last.pod).toBe('pod-c')
    expect(last.reason).toContain('sampled at temperature 1 (p 0.49)')
  })

  it('breaks exact ties at random', () => {
    const strategy = createDynamoStrategy()
    const random = createSeededRandom(5)
    const twins = [pod('pod-a'), pod('pod-b'), pod('pod-c', { load: { activeTokens: 16 } })]
    const chosen = new Set(
      Array.from({ length: 40 }, () => strategy.choose(prompt, twins, context(random)).pod),
    )
    expect(chosen).toEqual(new Set(['pod-a', 'pod-b']))
  })

  it('answers no pod when there is no candidate', () => {
    expect(createDynamoStrategy().choose(prompt, [], context()).pod).toBeNull()
  })

  it('only picks candidates, identically for a seed', () => {
    expectSeededProperties(createDynamoStrategy)
    expectSeededProperties(() => createDynamoStrategy(DynamoParameters.parse({ temperature: 0.5 })))
  })
})
