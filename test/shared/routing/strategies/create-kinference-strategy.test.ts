import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import type { PodCandidate, RoutingRequest } from '../../../../shared/routing/routing-strategy.ts'
import { createKinferenceStrategy } from '../../../../shared/routing/strategies/create-kinference-strategy.ts'
import { cachedTokensOf, predictTtftMs } from '../../../../shared/routing/ttft-model.ts'

const request: RoutingRequest = {
  id: 'r',
  model: 'm',
  promptTokens: 4352,
  blockSize: 16,
  promptText: '',
  maxTokens: 256,
  blockKeys: new Uint32Array(0),
}
const ttft = { overheadMs: 44, msPerToken: 0.1445 }
function pod(
  name: string,
  cachedBlocks: number,
  pendingPrefillTokens = 0,
  pendingRequests = 0,
): PodCandidate {
  return {
    name,
    cachedBlocks,
    trust: 'precise',
    load: {
      inFlight: pendingRequests,
      pendingRequests,
      pendingPrefillTokens,
      activeTokens: pendingPrefillTokens,
    },
    metrics: null,
    memory: null,
    ttft,
    weight: 100,
  }
}
const context = { nowMs: 0, random: createSeededRandom(1) }
const strategy = createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 })

describe('the kinference strategy', () => {
  it('prefers the pod holding the prefix', () => {
    const decision = strategy.choose(
      request,
      [pod('cold', 0), pod('warm', 256), pod('lukewarm', 64)],
      context,
    )
    expect(decision.pod).toBe('warm')
    expect(decision.reason).toMatch(
      /^kinference: predicted TTFT \d+ ms with 4096\/4352 tokens cached, next best \d+ ms$/,
    )
  })

  it('spills to a cold pod once the warm pod’s queue makes it slower (no hot spot)', () => {
    const warmBusy = pod('warm', 256, 40_000, 10)
    const decision = strategy.choose(request, [pod('cold', 0), warmBusy], context)
    expect(decision.pod).toBe('cold')
    const warm = predictTtftMs(request, warmBusy, 2048)
    const cold = predictTtftMs(request, pod('cold', 0), 2048)
    expect(cold).toBeLessThan(warm)
  })

  it('caps a hit at floor((n−1)/16)·16 tokens, as vLLM never hits the last token', () => {
    expect(cachedTokensOf({ ...request, promptTokens: 4096 }, 256)).toBe(4080)
    expect(cachedTokensOf(request, 500)).toBe(4336)
  })

  it('counts waiting requests the pod reports beyond its own as queued work', () => {
    const quiet = pod('a', 0)
    const busyElsewhere = {
      ...pod('b', 0),
      metrics: { running: 0, waiting: 4, kvCacheUsage: 0.2, ageMs: 10 },
    }
    expect(strategy.choose(request, [busyElsewhere, quiet], context).pod).toBe('a')
  })

  it('shares near-ties among idle pods instead of always picking the first', () => {
    const chosen = new Set<string | null>()
    const random = createSeededRandom(9)
    for (let i = 0; i < 50; i++)
      chosen.add(
        strategy.choose(request, [pod('a', 0), pod('b', 0), pod('c', 0)], { nowMs: 0, random }).pod,
      )
    expect(chosen.size).toBe(3)
  })

  it('returns no pod, with a reason, when there are no candidates', () => {
    expect(strategy.choose(request, [], context)).toEqual({
      pod: null,
      reason: 'kinference: no candidate pod',
      scores: [],
    })
  })
})
