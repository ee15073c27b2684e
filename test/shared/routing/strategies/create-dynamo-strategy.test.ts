import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import type { PodCandidate, RoutingRequest } from '../../../../shared/routing/routing-strategy.ts'
import {
  createDynamoStrategy,
  DynamoParameters,
  dynamoCost,
  dynamoStrategy,
  softmaxProbabilities,
} from '../../../../shared/routing/strategies/create-dynamo-strategy.ts'
import { blockKeys, context, expectSeededProperties, pod, request } from './routing-fixtures.ts'

const defaults = DynamoParameters.parse({})
const lmetric = DynamoParameters.parse({ selectionPolicy: 'lmetric' })

/** A prompt of 256 shared system blocks and `ownBlocks` of its own: 16 tokens a block. */
function chat(id: string, ownBlocks = 16): RoutingRequest {
  return request({
    id,
    promptTokens: (256 + ownBlocks) * 16,
    blockKeys: blockKeys(['system', 256], [id, ownBlocks]),
  })
}
/** A prompt of `blocks` blocks nothing else shares. */
function lone(id: string, blocks: number): RoutingRequest {
  return request({ id, promptTokens: blocks * 16, blockKeys: blockKeys([id, blocks]) })
}

function routeTo(
  strategy: ReturnType<typeof createDynamoStrategy>,
  routed: RoutingRequest,
  candidate: PodCandidate,
): void {
  strategy.onRouted?.(routed, candidate.name, context(), candidate)
}

/** Two chats on `candidate`, both past their prefill: their system prompt is active there. */
function twoChatsDecoding(
  strategy: ReturnType<typeof createDynamoStrategy>,
  candidate: PodCandidate,
) {
  for (const id of ['u1', 'u2']) routeTo(strategy, chat(id), candidate)
  for (const id of ['u1', 'u2']) strategy.onFirstToken?.(id)
}

const costs = (decision: { scores: { score: number | null }[] }) =>
  decision.scores.map((score) => score.score)

describe('dynamoCost', () => {
  // 320 prompt tokens = 20 blocks of 16.
  const prompt = request({ promptTokens: 320, blockSize: 16 })

  it('is prefill_load_scale × max(active + incoming − credit × overlap, 0) + active + new blocks', () => {
    // prefill (160 + 320 − 240) / 16 = 15 ... with the credit: (160 + 80 + 240)/16 − 15 = 15
    expect(
      dynamoCost(
        prompt,
        15,
        { activePrefillTokens: 160, activeBlocks: 50, newBlocks: 5 },
        defaults,
      ),
    ).toEqual({ prefillBlocks: 15, decodeBlocks: 55, cost: 70 })
    const scaled = DynamoParameters.parse({ prefillLoadScale: 2, overlapScoreCredit: 0.5 })
    // 2 × ((160 + 80 + 240)/16 − 7.5) + 55 = 2 × 22.5 + 55
    expect(
      dynamoCost(prompt, 15, { activePrefillTokens: 160, activeBlocks: 50, newBlocks: 5 }, scaled)
        .cost,
    ).toBe(100)
  })

  it('never lets cached blocks make the prefill term negative, and keeps fractional blocks', () => {
    // Dynamo adds the cached tokens back before the credit: (8 + 0 + 640)/16 − 40.
    expect(
      dynamoCost(prompt, 40, { activePrefillTokens: 8, activeBlocks: 3, newBlocks: 0 }, defaults),
    ).toEqual({ prefillBlocks: 0.5, decodeBlocks: 3, cost: 3.5 })
    expect(
      dynamoCost(
        prompt,
        40,
        { activePrefillTokens: 0, activeBlocks: 3, newBlocks: 0 },
        DynamoParameters.parse({ overlapScoreCredit: 2 }),
      ).prefillBlocks,
    ).toBe(0)
    expect(
      dynamoCost(prompt, 0, { activePrefillTokens: 8, activeBlocks: 0, newBlocks: 20 }, defaults),
    ).toEqual({ prefillBlocks: 20.5, decodeBlocks: 20, cost: 40.5 })
  })

  it('multiplies under lmetric: adjusted prefill × (decode + 1)', () => {
    expect(
      dynamoCost(prompt, 15, { activePrefillTokens: 160, activeBlocks: 50, newBlocks: 5 }, lmetric),
    ).toEqual({ prefillBlocks: 15, decodeBlocks: 55, cost: 15 * 56 })
    // A fully cached prompt costs nothing under lmetric, whatever the decode load.
    expect(
      dynamoCost(prompt, 20, { activePrefillTokens: 0, activeBlocks: 900, newBlocks: 0 }, lmetric)
        .cost,
    ).toBe(0)
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
  it('counts blocks shared by requests in flight on a worker once, and charges only new ones', () => {
    const strategy = createDynamoStrategy()
    const a = pod('pod-a')
    twoChatsDecoding(strategy, a)
    const decision = strategy.choose(chat('u3'), [a, pod('pod-b')], context())
    // a: prefill 272, decode 256 + 16 + 16 active (the system prompt once) + 16 new = 304.
    // b: prefill 272, decode 0 active + 272 new.
    expect(costs(decision)).toEqual([272 + 304, 272 + 272])
    expect(decision.pod).toBe('pod-b')
    expect(decision.reason).toBe(
      'dynamo: pod-b lowest cost, 544.0 (1 × prefill 272.0 + decode 272.0 blocks) vs 576.0 on the others',
    )
  })

  it('charges a routed request’s uncached tokens as prefill until its first token', () => {
    const strategy = createDynamoStrategy()
    // Sent with 200 of its 272 blocks cached there: 72 blocks of prefill to do.
    routeTo(strategy, chat('u1'), pod('pod-a', { cachedBlocks: 200 }))
    const pods = [pod('pod-a'), pod('pod-b')]
    // a: (72 + 20) prefill + 272 active + 20 new; b: 20 + 20.
    expect(costs(strategy.choose(lone('x', 20), pods, context()))).toEqual([384, 40])
    strategy.onFirstToken?.('u1')
    strategy.onFirstToken?.('u1')
    expect(costs(strategy.choose(lone('x', 20), pods, context()))).toEqual([312, 40])
  })

  it('frees a request’s blocks when it is released, keeping those another request still holds', () => {
    const strategy = createDynamoStrategy()
    const a = pod('pod-a')
    twoChatsDecoding(strategy, a)
    const probe = lone('x', 1)
    expect(costs(strategy.choose(probe, [a], context()))).toEqual([1 + 288 + 1])
    strategy.onReleased?.('u1')
    expect(costs(strategy.choose(probe, [a], context()))).toEqual([1 + 272 + 1])
    strategy.onReleased?.('u1')
    strategy.onReleased?.('u2')
    expect(costs(strategy.choose(probe, [a], context()))).toEqual([1 + 0 + 1])
  })

  it('frees the prefill too when a request ends before its first token (a failure)', () => {
    const strategy = createDynamoStrategy()
    routeTo(strategy, lone('r', 30), pod('pod-a'))
    expect(costs(strategy.choose(lone('x', 2), [pod('pod-a')], context()))).toEqual([32 + 32])
    strategy.onReleased?.('r')
    expect(costs(strategy.choose(lone('x', 2), [pod('pod-a')], context()))).toEqual([2 + 2])
  })

  it('keeps the newest placement of a request routed again, and forgets a removed pod', () => {
    const strategy = createDynamoStrategy()
    routeTo(strategy, lone('r', 30), pod('pod-a'))
    routeTo(strategy, lone('r', 30), pod('pod-b'))
    const pods = [pod('pod-a'), pod('pod-b')]
    expect(costs(strategy.choose(lone('x', 2), pods, context()))).toEqual([4, 64])
    strategy.onPodRemoved?.('pod-b')
    expect(costs(strategy.choose(lone('x', 2), pods, context()))).toEqual([4, 4])
    strategy.onReleased?.('r')
  })

  it('orders workers by adjusted prefill × (decode + 1) under lmetric', () => {
    const build = (parameters: typeof defaults) => {
      const strategy = createDynamoStrategy(parameters)
      routeTo(strategy, lone('long', 100), pod('pod-a'))
      strategy.onFirstToken?.('long')
      routeTo(strategy, lone('queued', 40), pod('pod-b'))
      return strategy
    }
    const pods = [pod('pod-a'), pod('pod-b')]
    // a: prefill 2, decode 100 + 2; b: prefill 40 + 2, decode 40 + 2.
    const linear = build(defaults).choose(lone('x', 2), pods, context())
    expect(costs(linear)).toEqual([104, 84])
    expect(linear.pod).toBe('pod-b')
    const product = build(lmetric).choose(lone('x', 2), pods, context())
    expect(costs(product)).toEqual([2 * 103, 42 * 43])
    expect(product.pod).toBe('pod-a')
    expect(product.reason).toBe(
      'dynamo (lmetric): pod-a lowest cost, 206.0 (prefill 2.0 × (decode 102.0 + 1) blocks) vs 1806.0 on the others',
    )
  })

  it('samples with softmax over normalised costs when the temperature is above 0', () => {
    // costs a 65, b 120, c 30: probabilities 0.3313, 0.1798, 0.4888 (cumulative 0.3313, 0.5112)
    const strategy = createDynamoStrategy(DynamoParameters.parse({ temperature: 1 }))
    const x = lone('x', 20)
    routeTo(strategy, lone('on-a', 25), pod('pod-a'))
    strategy.onFirstToken?.('on-a')
    routeTo(strategy, lone('on-b', 80), pod('pod-b'))
    strategy.onFirstToken?.('on-b')
    routeTo(strategy, lone('on-c', 10), pod('pod-c', { cachedBlocks: 10 }))
    const pods = [pod('pod-a'), pod('pod-b'), pod('pod-c', { cachedBlocks: 20 })]
    expect(costs(strategy.choose(x, pods, context()))).toEqual([65, 120, 30])
    const picks = [0.3, 0.4, 0.6].map((sample) =>
      strategy.choose(
        x,
        pods,
        context(() => sample),
      ),
    )
    expect(picks.map((decision) => decision.pod)).toEqual(['pod-a', 'pod-b', 'pod-c'])
    expect(picks[2]?.reason).toContain('sampled at temperature 1 (p 0.49)')
  })

  it('breaks exact ties at random', () => {
    const strategy = createDynamoStrategy()
    routeTo(strategy, lone('busy', 1), pod('pod-c'))
    const random = createSeededRandom(5)
    const pods = [pod('pod-a'), pod('pod-b'), pod('pod-c')]
    const chosen = new Set(
      Array.from({ length: 40 }, () => strategy.choose(lone('x', 20), pods, context(random)).pod),
    )
    expect(chosen).toEqual(new Set(['pod-a', 'pod-b']))
  })

  it('answers no pod when there is no candidate', () => {
    expect(createDynamoStrategy().choose(lone('x', 1), [], context()).pod).toBeNull()
  })

  it('only picks candidates, identically for a seed', () => {
    expectSeededProperties(createDynamoStrategy)
    expectSeededProperties(() => createDynamoStrategy(DynamoParameters.parse({ temperature: 0.5 })))
    expectSeededProperties(() => createDynamoStrategy(lmetric))
  })
})

describe('dynamo speculative entries', () => {
  it('runs without them by default, as Dynamo ships; dynamo-speculative asks for them', () => {
    expect(defaults.speculativeEntries).toBe(false)
    expect(createDynamoStrategy().speculativeEntries).toBe(false)
    expect(dynamoStrategy.variants?.['dynamo-speculative']).toEqual({ speculativeEntries: true })
    const helped = DynamoParameters.parse(dynamoStrategy.variants?.['dynamo-speculative'])
    expect(helped).toEqual({ ...defaults, speculativeEntries: true })
    expect(createDynamoStrategy(helped).speculativeEntries).toBe(true)
  })
})
