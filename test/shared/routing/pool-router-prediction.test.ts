import { describe, expect, it } from 'vitest'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { type HeldPayload, PoolRouter } from '../../../shared/routing/pool-router.ts'
import { heldLookup, onePodSpec } from '../../support/one-pod-pool.ts'

// What policy and the DES judge a request's objectives on (PoolRouter.prediction): the
// chosen pod's predicted TTFT and time per token, plus the wait behind held requests.

const payload: HeldPayload = { released: () => {} }

function setup() {
  const router = new PoolRouter({
    name: 'p',
    spec: onePodSpec,
    index: createMemoryKvIndex(),
    random: () => 0.5,
    indexNowMs: () => 0,
    onError: (message) => {
      throw new Error(message)
    },
  })
  router.addPod('a', 0)
  router.setIndexReady('a', true)
  return router
}

describe('PoolRouter.prediction', () => {
  it("is the chosen pod's predictions while nothing is held", () => {
    const router = setup()
    const lookup = heldLookup('r1')
    const route = router.score(lookup, 0)
    expect(router.prediction(lookup, route)).toEqual({
      ttftMs: route.predictedTtftMs.get('a'),
      tpotMs: route.predictedTpotMs.get('a') ?? null,
    })
  })

  it('adds a dispatch gap for each held request ranked before it, and one for itself', () => {
    const router = setup()
    router.dispatchNow(heldLookup('r1'), 0)
    router.dispatchNow(heldLookup('r2'), 200) // one dispatch every 200 ms
    const held = router.offer(heldLookup('r3'), payload, 201, undefined, { deadlineMs: 5_000 })
    expect(held.kind).toBe('held')
    const lookup = heldLookup('r4')
    const route = router.score(lookup, 202)
    expect(router.prediction(lookup, route)?.ttftMs).toBeCloseTo(
      (route.predictedTtftMs.get('a') ?? 0) + 2 * 200,
      6,
    )
  })
})
