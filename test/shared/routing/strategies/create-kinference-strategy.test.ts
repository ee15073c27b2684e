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

/** A pod's KV memory: `used` tokens held now, and the requests decoding as [steps left, tokens]. */
function withMemory(
  candidate: PodCandidate,
  used: number,
  decoding: (readonly [number, number])[],
): PodCandidate {
  return {
    ...candidate,
    memory: {
      capacityTokens: 94_208,
      usedTokens: used,
      pendingTokens: candidate.load.pendingPrefillTokens,
      stepMs: 40,
      msPerContextToken: 2e-4,
      releases: () => decoding,
    },
  }
}
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

  it('copies a prefix only where the answers still to come leave room for it', () => {
    const warmBusy = withMemory(pod('warm', 256, 40_000, 10), 60_000, [])
    // 32% used now, but 50 running requests will each write 1,000 more tokens: with the
    // copy the pod would pass 85% of its KV, and the running requests would be preempted.
    const filling = withMemory(pod('cold', 0), 30_000, Array(50).fill([1000, 500]))
    expect(strategy.choose(request, [filling, warmBusy], context).pod).toBe('warm')
    // The same pod with 10 of them still has room: the copy is worth its prefill.
    const roomy = withMemory(pod('cold', 0), 30_000, Array(10).fill([1000, 500]))
    expect(strategy.choose(request, [roomy, warmBusy], context).pod).toBe('cold')
  })

  it('does not bar a copy that adds less prefill than the warm pod computes anyway', () => {
    // A fifth turn: 5,173 tokens of which the warm pod holds only the 1,024-token system
    // prompt (the history was evicted). The warm pod has 40,000 tokens queued; the other
    // pod holds nothing and its answers to come fill it past 85%, but it starts at once.
    const turn = { ...request, promptTokens: 5173 }
    const warmQueued = withMemory(pod('warm', 64, 40_000, 10), 60_000, [])
    const filling = withMemory(pod('cold', 0), 30_000, Array(50).fill([1000, 500]))
    expect(strategy.choose(turn, [filling, warmQueued], context).pod).toBe('cold')
    // Where the warm pod holds most of the prompt, the copy stays barred.
    const warmHolding = withMemory(pod('warm', 300, 40_000, 10), 60_000, [])
    expect(strategy.choose(turn, [filling, warmHolding], context).pod).toBe('warm')
  })

  it('places a new prefix by the memory its pod will need, answers still to come included', () => {
    const fresh = { ...request, promptTokens: 1250, maxTokens: 8000 }
    // a holds little now but decodes five fresh 8,000-token answers; b holds more, nearly done.
    const a = withMemory(pod('a', 0), 1_000, Array(5).fill([8000, 200]))
    const b = withMemory(pod('b', 0), 8_000, Array(5).fill([10, 1600]))
    for (let seed = 1; seed <= 5; seed++)
      expect(
        strategy.choose(fresh, [a, b], { nowMs: 0, random: createSeededRandom(seed) }).pod,
      ).toBe('b')
  })

  it('charges a pod the answers that will not fit: a small prefix hit is not worth a preemption', () => {
    const long = { ...request, promptTokens: 1250, maxTokens: 8000 }
    // The warm pod holds the 256-token system prompt, but its ten running answers will
    // write 80,000 more tokens into 94,208: this request's would be preempted and redone.
    const warmFull = withMemory(pod('warm', 16), 40_000, Array(10).fill([8000, 4000]))
    const coldRoomy = withMemory(pod('cold', 0), 20_000, Array(3).fill([8000, 4000]))
    expect(strategy.choose(long, [warmFull, coldRoomy], context).pod).toBe('cold')
    // With room on both, the hit wins.
    const warmRoomy = withMemory(pod('warm', 16), 20_000, Array(3).fill([8000, 4000]))
    expect(strategy.choose(long, [warmRoomy, coldRoomy], context).pod).toBe('warm')
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

  it("weighs a copy's backlog by the pool's traffic, not by this replica's share of it", () => {
    // The warm pod holds the prefix behind 5,000 queued tokens; copying to the idle pod
    // costs a 4,352-token prefill that everyone arriving there waits behind. This replica
    // sends 0.5 req/s: alone, the copy is worth it; when the pods report three times the
    // requests this replica has there, the pool's rate is three times its own, and not.
    const choose = (warmRunning: number) => {
      const replica = createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 })
      for (let t = 0; t <= 20_000; t += 2000)
        replica.onRouted?.(request, 'warm', { ...context, nowMs: t }, pod('warm', 256))
      const warm = {
        ...pod('warm', 256, 5000, 5),
        metrics: { running: warmRunning, waiting: 5, kvCacheUsage: 0.3, ageMs: 10 },
      }
      const cold = { ...pod('cold', 0), metrics: { ...warm.metrics, running: 0, waiting: 0 } }
      return replica.choose(request, [warm, cold], { ...context, nowMs: 20_000 }).pod
    }
    expect(choose(0)).toBe('cold')
    expect(choose(10)).toBe('warm')
  })

  it('returns no pod, with a reason, when there are no candidates', () => {
    expect(strategy.choose(request, [], context)).toEqual({
      pod: null,
      reason: 'kinference: no candidate pod',
      scores: [],
    })
  })

  describe('decode interference', () => {
    // Both hold most of the prompt; `crowded` a little more of it, but its batch holds
    // 60k tokens of context that every one of a long answer's steps reads.
    const long = { ...request, maxTokens: 1024 }
    const decoding = (n: number) => Array.from({ length: n }, () => [200, 2_000] as const)
    const crowded = withMemory(pod('crowded', 256), 60_000, decoding(30))
    const light = withMemory(pod('light', 200), 10_000, decoding(3))

    it('by TTFT alone, takes the pod that holds more of the prompt', () => {
      const ttftOnly = createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 })
      expect(ttftOnly.choose(long, [crowded, light], context).pod).toBe('crowded')
    })

    it('weighing decoding, a long answer goes where its steps are not slowed by a crowded batch', () => {
      const whole = createKinferenceStrategy({
        stepBudget: 2048,
        copyHeadroom: 0.85,
        decodeWeight: 0.25,
      })
      const decision = whole.choose(long, [crowded, light], context)
      expect(decision.pod).toBe('light')
      // The score holds the decode term; the TTFT prediction stays the TTFT alone.
      const scores = new Map(decision.scores.map((s) => [s.pod, s]))
      expect(scores.get('crowded')?.predictedTtftMs).toBeLessThan(
        scores.get('light')?.predictedTtftMs as number,
      )
      expect(scores.get('crowded')?.score).toBeGreaterThan(scores.get('light')?.score as number)
    })

    it('a short answer still takes the pod holding more of its prompt', () => {
      const whole = createKinferenceStrategy({
        stepBudget: 2048,
        copyHeadroom: 0.85,
        decodeWeight: 0.25,
      })
      expect(whole.choose({ ...request, maxTokens: 8 }, [crowded, light], context).pod).toBe(
        'crowded',
      )
    })
  })
})
