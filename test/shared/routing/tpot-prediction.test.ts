import { describe, expect, it } from 'vitest'
import { predictTpotMs } from '../../../shared/routing/tpot-prediction.ts'
import { pod, request } from './strategies/routing-fixtures.ts'

const memory = (stepMs: number, msPerContextToken: number) => ({
  capacityTokens: 100_000,
  usedTokens: 0,
  pendingTokens: 0,
  stepMs,
  msPerContextToken,
  releases: () => [],
})

describe('predictTpotMs', () => {
  it("is the pod's step now plus what the request's own context adds to every step", () => {
    const req = request({ promptTokens: 1_000, maxTokens: 200 })
    // 40 ms + 0.001 ms × (1,000 + 100) tokens
    expect(predictTpotMs(req, pod('a', { memory: memory(40, 0.001) }))).toBeCloseTo(41.1, 6)
  })

  it('counts the requests waiting there for their first token at this request’s length', () => {
    const req = request({ promptTokens: 1_000, maxTokens: 200 })
    const busy = pod('a', {
      memory: memory(40, 0.001),
      load: { pendingRequests: 2 },
      metrics: { running: 4, waiting: 3, kvCacheUsage: 0.5, ageMs: 5, unseenWaiting: 1 },
    })
    // Four contexts of 1,100 join the batch: this one, two of this replica's, one unseen.
    expect(predictTpotMs(req, busy)).toBeCloseTo(40 + 0.001 * 1_100 * 4, 6)
  })

  it('is unknown for a pod whose KV capacity is unknown', () => {
    expect(predictTpotMs(request(), pod('a'))).toBeNull()
  })
})
