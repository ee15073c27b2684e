import { describe, expect, it } from 'vitest'
import {
  PoolAdmission,
  type Waiter,
} from '../../../../control-plane/scorer/pools/pool-admission.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { createMemoryKvIndex } from '../../../../shared/kv-index/memory-kv-index.ts'
import { PoolRouter } from '../../../../shared/routing/pool-router.ts'
import { heldLookup, onePodSpec } from '../../../support/one-pod-pool.ts'

/** One pod whose KV holds 4,096 tokens, without late binding: only a rule's hold holds. */
function setup() {
  const router = new PoolRouter<Waiter>({
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
  const admission = new PoolAdmission({ router, releaseEveryMs: 5 })
  return { router, admission }
}

const lookup = (id: string) => heldLookup(id, 't')

const options = (deadlineMs?: number) => ({
  signal: new AbortController().signal,
  answered: async () => undefined,
  ...(deadlineMs !== undefined ? { terms: { deadlineMs } } : {}),
})

describe('a rule’s hold in the scorer’s admission', () => {
  it('holds a request its pod cannot start, and answers 429 slo_unattainable at its deadline', async () => {
    const { admission } = setup()
    expect((await admission.admit(lookup('r1'), options()))?.route.decision.pod).toBe('a')
    const held = admission.admit(lookup('r2'), options(performance.now() + 30))
    expect(admission.held).toBe(1)
    const error = await held.then(
      () => null,
      (e: unknown) => e,
    )
    expect(KinfError.isInstance(error)).toBe(true)
    if (!KinfError.isInstance(error)) return
    expect(error.status).toBe(429)
    expect(error.openAiCode).toBe('slo_unattainable')
    expect(error.retryAfterSeconds).toBe(1)
    expect(admission.held).toBe(0)
    await admission.close()
  })

  it('dispatches a held request once its pod frees up before the deadline', async () => {
    const { router, admission } = setup()
    await admission.admit(lookup('r1'), options())
    const held = admission.admit(lookup('r2'), options(performance.now() + 10_000))
    router.firstToken('r1', performance.now())
    router.finished('r1', performance.now(), 0)
    expect((await held)?.route.decision.pod).toBe('a')
    await admission.close()
  })

  it('without a hold and without late binding, sends every request at once', async () => {
    const { admission } = setup()
    await admission.admit(lookup('r1'), options())
    expect((await admission.admit(lookup('r2'), options()))?.heldMs).toBe(0)
    await admission.close()
  })
})
