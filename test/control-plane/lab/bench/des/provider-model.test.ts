import { describe, expect, it } from 'vitest'
import { ProviderModel } from '../../../../../control-plane/lab/bench/des/provider-model.ts'
import { createSeededRandom } from '../../../../../shared/random/create-seeded-random.ts'

describe('ProviderModel', () => {
  it('answers after the base latency and the prompt read, then writes at its output rate', () => {
    const provider = new ProviderModel(
      { ttftBaseMs: 400, ttftJitter: 0, msPerPromptToken: 0.1, outputTokensPerSecond: 50 },
      createSeededRandom(1),
    )
    const answer = provider.send(1_000, 2_000, 101)
    expect(answer).toEqual({ kind: 'served', firstTokenMs: 1_600, endMs: 3_600 })
  })

  it('throttles past its request quota, and refills it over the minute', () => {
    const provider = new ProviderModel({ requestsPerMinute: 2 }, createSeededRandom(1))
    expect(provider.send(0, 10, 10).kind).toBe('served')
    expect(provider.send(0, 10, 10).kind).toBe('served')
    expect(provider.send(1, 10, 10).kind).toBe('throttled')
    expect(provider.send(30_001, 10, 10).kind).toBe('served')
  })

  it('throttles past its token quota without spending its request quota', () => {
    const provider = new ProviderModel(
      { requestsPerMinute: 2, tokensPerMinute: 1_000 },
      createSeededRandom(1),
    )
    expect(provider.send(0, 900, 200).kind).toBe('throttled')
    expect(provider.send(0, 400, 100).kind).toBe('served')
    expect(provider.send(0, 400, 100).kind).toBe('served')
  })

  it('is the same for the same seed, and its latency spread keeps its mean', () => {
    const draw = (seed: number) => {
      const provider = new ProviderModel(
        { ttftJitter: 0.5, msPerPromptToken: 0 },
        createSeededRandom(seed),
      )
      return Array.from({ length: 2_000 }, (_, i) => {
        const answer = provider.send(i * 100, 0, 1)
        return answer.kind === 'served' ? answer.firstTokenMs - i * 100 : Number.NaN
      })
    }
    expect(draw(7)).toEqual(draw(7))
    const ttfts = draw(7)
    const mean = ttfts.reduce((a, b) => a + b, 0) / ttfts.length
    expect(mean).toBeGreaterThan(450 * 0.93)
    expect(mean).toBeLessThan(450 * 1.07)
    expect(Math.max(...ttfts)).toBeGreaterThan(900)
  })

  it('refuses options that make no sense, naming them', () => {
    expect(() => new ProviderModel({ outputTokensPerSecond: 0 }, Math.random)).toThrow(
      /outputTokensPerSecond/,
    )
  })
})
