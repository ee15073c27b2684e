import { describe, expect, it } from 'vitest'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import {
  type HeldPayload,
  PoolRouter,
  type RouteResult,
} from '../../../shared/routing/pool-router.ts'

const spec = (lateBinding = false) =>
  InferencePoolSpec.parse({
    selector: { matchLabels: {} },
    targetPort: 8000,
    models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768, loraAdapters: ['m-fr'] }],
    gpuProfile: 'l40s-27b-fp8',
    scheduler: { maxNumBatchedTokens: 256 },
    routing: { strategy: 'kinference', kinference: { lateBinding } },
  })

const prompt = (seed: number, length = 640) =>
  Array.from({ length }, (_, i) => 1000 + ((seed * 7919 + i * 31) % 50_000))

function setup(options: { lateBinding?: boolean; index?: KvIndex } = {}) {
  const index = options.index ?? createMemoryKvIndex()
  let now = 0
  const errors: string[] = []
  const router = new PoolRouter<Held>({
    name: 'p',
    spec: spec(options.lateBinding),
    index,
    random: createSeededRandom(1),
    indexNowMs: () => now,
    onError: (message) => errors.push(message),
  })
  for (const pod of ['a', 'b', 'c']) {
    router.addPod(pod, 0)
    router.setIndexReady(pod, true)
  }
  const request = (id: string, ids: number[]) =>
    router.prepare({
      id,
      model: 'm',
      promptIds: ids,
      maxTokens: 8,
      cacheSalt: null,
      promptText: () => '',
    })
  return { router, index, request, errors, setNow: (ms: number) => (now = ms) }
}

interface Held extends HeldPayload {
  routes: RouteResult[]
}
const held = (): Held => {
  const routes: RouteResult[] = []
  return { routes, released: (route) => routes.push(route) }
}

/** Lets every lookup's answer wait until `open` is called. */
function gated(index: KvIndex) {
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  const wrapped: KvIndex = {
    ...index,
    lookup: async (...args) => {
      const answer = await index.lookup(...args)
      await gate
      return answer
    },
  }
  return { index: wrapped, open: () => open() }
}

describe('PoolRouter', () => {
  it('keys block keys by the served model, an adapter by its own name', () => {
    const { router, request } = setup()
    expect(router.served('m-fr')).toMatchObject({ baseModel: 'm', loraName: 'm-fr' })
    expect(router.served('other')).toBeNull()
    const base = request('r1', prompt(1))
    const adapter = router.prepare({
      ...base.routing,
      promptIds: prompt(1),
      cacheSalt: null,
      model: 'm-fr',
      promptText: () => '',
    })
    expect(base.keys.length).toBe(80)
    expect(adapter.keys).not.toEqual(base.keys)
    // The strategy sees the blocks it was looked up with (Dynamo counts them per pod).
    expect(base.routing.blockKeys).toBe(base.keys)
  })

  it('dispatches to the pod holding the prompt and adds its blocks there as speculative entries', async () => {
    const { router, index, request } = setup()
    const warm = request('w', prompt(2))
    await index.addSpeculative('b', warm.keys, 20, 10_000)
    const lookup = await router.lookup(request('r', prompt(2)))
    expect([...lookup.blocks]).toEqual([
      ['a', 0],
      ['b', 20],
      ['c', 0],
    ])
    const offer = router.offer(lookup, held(), 1)
    expect(offer.kind === 'routed' && offer.route.decision.pod).toBe('b')
    expect(router.matchedTokens(lookup, 'b')).toBe(320)
    await Promise.resolve()
    const again = await router.lookup(request('r2', prompt(2)))
    expect(again.blocks.get('b')).toBe(40)
    const report = router.podReports(1).find((pod) => pod.name === 'b')
    expect(report?.load.inFlight).toBe(1)
    router.finished('r', 5, 624)
    expect(router.podReports(5).find((pod) => pod.name === 'b')?.load.inFlight).toBe(0)
  })

  it('credits each pod with its own blocks when a pod leaves while the lookup is pending', async () => {
    const memory = createMemoryKvIndex()
    const gate = gated(memory)
    const { router, request } = setup({ index: gate.index })
    await memory.addSpeculative('b', request('w', prompt(3)).keys, 40, 10_000)
    const pending = router.lookup(request('r', prompt(3)))
    router.removePod('a', 1)
    gate.open()
    const route = router.score(await pending, 2)
    expect(route.indexedBlocks.get('b')).toBe(40)
    expect(route.indexedBlocks.get('c')).toBe(0)
    expect(route.decision.pod).toBe('b')
  })

  it('holds a request its best pod cannot start, and routes it on the pods that remain', async () => {
    const { router, index, request } = setup({ lateBinding: true })
    await index.addSpeculative('b', request('w', prompt(4)).keys, 40, 10_000)
    // Each pod busy with two steps of prefill (2 × 256 tokens): nobody can start now.
    for (const i of [0, 1, 2]) {
      const busy = router.dispatchNow(await router.lookup(request(`f${i}`, prompt(10 + i))), 0)
      expect(busy.decision.pod).not.toBeNull()
    }
    const busyPods = new Set(
      router
        .podReports(0)
        .filter((p) => p.load.pendingRequests > 0)
        .map((p) => p.name),
    )
    expect(busyPods.size).toBe(3)
    const waiter = held()
    const offer = router.offer(await router.lookup(request('t', prompt(4))), waiter, 1)
    expect(offer.kind).toBe('held')
    expect(router.held.size).toBe(1)
    router.removePod('a', 2)
    for (const i of [0, 1, 2]) router.firstToken(`f${i}`, 3)
    expect(router.held.size).toBe(0)
    expect(waiter.routes).toHaveLength(1)
    const route = waiter.routes[0] as RouteResult
    expect(route.indexedBlocks.get('b')).toBe(40)
    expect(route.decision.pod).toBe('b')
  })

  it('a withdrawn request is never dispatched; drain hands back what is still held', async () => {
    const { router, request } = setup({ lateBinding: true })
    for (const i of [0, 1, 2])
      router.dispatchNow(await router.lookup(request(`f${i}`, prompt(20 + i))), 0)
    const gone = router.offer(await router.lookup(request('gone', prompt(30))), held(), 1)
    const kept = router.offer(await router.lookup(request('kept', prompt(31))), held(), 1)
    if (gone.kind !== 'held' || kept.kind !== 'held') throw new Error('expected both held')
    expect(router.held.remove(gone.ticket)).toBe(true)
    expect(router.held.remove(gone.ticket)).toBe(false)
    expect(router.held.drain().map((entry) => entry.sinceMs)).toEqual([1])
    expect(router.held.size).toBe(0)
    const inFlight = router.podReports(2).reduce((sum, pod) => sum + pod.load.inFlight, 0)
    expect(inFlight).toBe(3)
  })

  it('reports a speculative entry it could not write, and routes on', async () => {
    const failing: KvIndex = {
      ...createMemoryKvIndex(),
      addSpeculative: () => Promise.reject(new Error('index down')),
    }
    const { router, request, errors } = setup({ index: failing })
    const route = router.dispatchNow(await router.lookup(request('r', prompt(40))), 0)
    expect(route.decision.pod).not.toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(errors).toEqual([`speculative entry for ${route.decision.pod} failed: index down`])
  })
})

describe('PoolRouter block size', () => {
  it("keys requests with the block size the pods' events carry once told, else the pool's", async () => {
    const { router, index, request } = setup()
    const ids = prompt(5, 640)
    expect(router.blockSize).toBe(16)
    expect(request('r1', ids).routing.blockSize).toBe(16)
    // Pod a announces 32-token full-attention blocks (a hybrid model's attention group).
    const events = [
      {
        type: 'stored' as const,
        engineHashes: Array.from({ length: 20 }, (_, i) => BigInt(i + 1)),
        parentEngineHash: null,
        tokenIds: ids,
        blockSize: 32,
        loraName: null,
        cacheSalt: null,
      },
    ]
    await index.apply('a', 'm', events)
    expect((await router.lookup(request('r2', ids))).blocks.get('a')).toBe(0)
    router.learnBlockSize(32)
    const learned = request('r3', ids)
    expect(learned.routing.blockSize).toBe(32)
    expect(learned.keys.length).toBe(2 * 20)
    const lookup = await router.lookup(learned)
    expect(lookup.blocks.get('a')).toBe(20)
    // In tokens, with vLLM's rule that the last prompt token is always computed.
    expect(router.matchedTokens(lookup, 'a')).toBe(19 * 32)
    for (const bad of [0, -16, 1.5, Number.NaN]) router.learnBlockSize(bad)
    expect(router.blockSize).toBe(32)
  })
})
