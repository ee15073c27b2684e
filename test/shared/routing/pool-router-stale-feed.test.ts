import { describe, expect, it } from 'vitest'
import type { RoutingSpecInput } from '../../../shared/crd/routing-spec.ts'
import { createKinferenceStrategy } from '../../../shared/routing/strategies/create-kinference-strategy.ts'
import { recordingPoolRouter } from '../../support/recording-pool-router.ts'
import { context, pod, request } from './strategies/routing-fixtures.ts'

/** A pool of pods a and b whose speculative entries' TTLs (per pod, in order) are kept. */
function pool(routing: RoutingSpecInput) {
  const { router, writes, setNow, now } = recordingPoolRouter(routing)
  let sent = 0
  /**
   * One request of its own prompt (nothing of it indexed anywhere), answered at once with
   * `reportedCachedTokens` cached: above 0, the pod held what the index did not show.
   */
  const answer = async (reportedCachedTokens: number): Promise<string> => {
    setNow(now() + 10)
    const nowMs = now()
    sent++
    const promptIds = Array.from({ length: 640 }, (_, i) => sent * 100_000 + i)
    const prepared = router.prepare({
      id: `r${sent}`,
      model: 'm',
      promptIds,
      maxTokens: 8,
      cacheSalt: null,
      promptText: () => 'x'.repeat(2_560),
    })
    const route = router.dispatchNow(await router.lookup(prepared), nowMs)
    router.firstToken(`r${sent}`, nowMs + 1)
    router.finished(`r${sent}`, nowMs + 2, reportedCachedTokens)
    return route.decision.pod as string
  }
  // The TTL of the last entry written there (the renewal at the first token).
  const last = (name: string) => {
    const write = writes.filter((w) => w.pod === name).at(-1)
    return write && write.expiresAtMs - write.atMs
  }
  return { answer, last }
}

describe('speculative entries on a late or lossy KV-event feed', () => {
  it('are held 30 s for a new pod’s first hundred answers, then for the pool’s 2 s', async () => {
    const { answer, last } = pool({ strategy: 'kinference' })
    const first = await answer(0)
    expect(last(first)).toBe(30_000)
    // Over 100 answers a pod that found no more cached than the index said.
    for (let i = 0; i < 400; i++) await answer(0)
    expect(last('a')).toBe(2_000)
    expect(last('b')).toBe(2_000)
  })

  it('are held 30 s again once a pod’s answers find cached blocks the index missed', async () => {
    const { answer, last } = pool({ strategy: 'kinference' })
    for (let i = 0; i < 400; i++) await answer(0)
    // Events lost: the pod served 1,024 tokens from cache that the index did not show. One
    // such answer is a complete feed's now and then: the pool's TTL stays.
    const lossy = await answer(1_024)
    let next = await answer(0)
    while (next !== lossy) next = await answer(0)
    expect(last(lossy)).toBe(2_000)
    // A second soon after shows the feed lossy.
    next = await answer(1_024)
    while (next !== lossy) next = await answer(1_024)
    next = await answer(0)
    while (next !== lossy) next = await answer(0)
    expect(last(lossy)).toBe(30_000)
  })

  it('keep the peers’ TTL whatever their answers say', async () => {
    const { answer, last } = pool({ strategy: 'dynamo', dynamo: { speculativeEntries: true } })
    for (let i = 0; i < 20; i++) await answer(1_024)
    expect(last('a')).toBe(2_000)
    expect(last('b')).toBe(2_000)
  })
})

describe('kinference on pods whose index is not believed', () => {
  it('chooses a load-only pod by its load', () => {
    const strategy = createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 })
    const busy = { inFlight: 4, pendingRequests: 3, pendingPrefillTokens: 6_000 }
    const light = { inFlight: 1, pendingRequests: 1, pendingPrefillTokens: 800 }
    for (const [first, second] of [
      ['a', 'b'],
      ['b', 'a'],
    ] as const) {
      const candidates = [
        pod(first, { trust: 'load-only', load: { ...busy, activeTokens: 20_000 } }),
        pod(second, { trust: 'load-only', load: { ...light, activeTokens: 4_000 } }),
      ]
      const decision = strategy.choose(request({ promptTokens: 4_000 }), candidates, context())
      expect(decision.pod).toBe(second)
    }
  })
})
