import { describe, expect, it } from 'vitest'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import type { RoutingSpecInput } from '../../../shared/crd/routing-spec.ts'
import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { routerSettings } from '../../../shared/routing/pool-options.ts'
import { PoolRouter } from '../../../shared/routing/pool-router.ts'

const spec = (routing: RoutingSpecInput) =>
  InferencePoolSpec.parse({
    selector: { matchLabels: {} },
    targetPort: 8000,
    models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
    gpuProfile: 'l40s-27b-fp8',
    routing,
  })

const ids = Array.from({ length: 640 }, (_, i) => 1000 + i * 31)

/** The pods the pool wrote speculative entries for, routing one request. */
async function speculativeWrites(routing: RoutingSpecInput): Promise<string[]> {
  const written: string[] = []
  const memory = createMemoryKvIndex()
  const index: KvIndex = {
    ...memory,
    addSpeculative: (pod, chain, blocks, expiresAtMs) => {
      written.push(pod)
      return memory.addSpeculative(pod, chain, blocks, expiresAtMs)
    },
  }
  const router = new PoolRouter({
    name: 'p',
    spec: spec(routing),
    index,
    random: createSeededRandom(1),
    indexNowMs: () => 0,
    onError: (message) => {
      throw new Error(message)
    },
  })
  for (const pod of ['a', 'b']) {
    router.addPod(pod, 0)
    router.setIndexReady(pod, true)
  }
  const request = router.prepare({
    id: 'r',
    model: 'm',
    promptIds: ids,
    maxTokens: 8,
    cacheSalt: null,
    promptText: () => 'x'.repeat(2_560),
  })
  const route = router.dispatchNow(await router.lookup(request), 0)
  expect(route.decision.pod).not.toBeNull()
  return written
}

describe('speculative entries per strategy', () => {
  it('are written for kinference, for 2 s unless the pool says otherwise', async () => {
    expect(routerSettings(spec({ strategy: 'kinference' })).speculativeTtlMs).toBe(2_000)
    expect(await speculativeWrites({ strategy: 'kinference' })).toHaveLength(1)
  })

  it('are not written for Dynamo or llm-d as deployed', async () => {
    for (const strategy of ['dynamo', 'llmd-sticky'] as const) {
      expect(routerSettings(spec({ strategy })).speculativeTtlMs).toBeNull()
      expect(await speculativeWrites({ strategy })).toEqual([])
    }
  })

  it('are written for their variants that switch them on', async () => {
    const dynamo: RoutingSpecInput = { strategy: 'dynamo', dynamo: { speculativeEntries: true } }
    const sticky: RoutingSpecInput = {
      strategy: 'llmd-sticky',
      llmdSticky: { prefixProducer: 'precise', speculativeIndexing: true },
    }
    for (const routing of [dynamo, sticky]) {
      expect(routerSettings(spec(routing)).speculativeTtlMs).toBe(2_000)
      expect(await speculativeWrites(routing)).toHaveLength(1)
    }
  })
})

describe('a speculative entry’s life', () => {
  /** Routes one request at 0 on a dynamo pool with speculative entries (a fixed 2-s TTL). */
  async function routed() {
    const expiries: { pod: string; expiresAtMs: number }[] = []
    let nowMs = 0
    const memory = createMemoryKvIndex()
    const index: KvIndex = {
      ...memory,
      addSpeculative: (pod, chain, blocks, expiresAtMs) => {
        expiries.push({ pod, expiresAtMs })
        return memory.addSpeculative(pod, chain, blocks, expiresAtMs)
      },
    }
    const router = new PoolRouter({
      name: 'p',
      spec: spec({ strategy: 'dynamo', dynamo: { speculativeEntries: true } }),
      index,
      random: createSeededRandom(1),
      indexNowMs: () => nowMs,
      onError: (message) => {
        throw new Error(message)
      },
    })
    for (const pod of ['a', 'b']) {
      router.addPod(pod, 0)
      router.setIndexReady(pod, true)
    }
    const request = router.prepare({
      id: 'r',
      model: 'm',
      promptIds: ids,
      maxTokens: 8,
      cacheSalt: null,
      promptText: () => 'x'.repeat(2_560),
    })
    const route = router.dispatchNow(await router.lookup(request), 0)
    const pod = route.decision.pod as string
    const at = (ms: number) => {
      nowMs = ms
    }
    return { router, expiries, pod, predicted: route.predictedTtftMs.get(pod) as number, at }
  }

  it('covers the predicted wait for the first token, then the TTL', async () => {
    const { expiries, pod, predicted } = await routed()
    expect(predicted).toBeGreaterThan(0)
    expect(expiries).toEqual([{ pod, expiresAtMs: predicted + 2_000 }])
  })

  it('is renewed from the first token, however long the request queued', async () => {
    const { router, expiries, pod, at } = await routed()
    at(9_000)
    router.firstToken('r', 9_000)
    expect(expiries.at(-1)).toEqual({ pod, expiresAtMs: 11_000 })
    // Once, at the first token: later tokens and the end write nothing.
    router.progress('r', 4)
    router.finished('r', 9_500, 0)
    expect(expiries).toHaveLength(2)
  })

  it('is not renewed for a request that failed before its first token', async () => {
    const { router, expiries } = await routed()
    router.failed('r', 500, false)
    router.firstToken('r', 600)
    expect(expiries).toHaveLength(1)
  })
})
