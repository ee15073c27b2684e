import { describe, expect, it } from 'vitest'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { AdmissionQueue, type HeldRequest } from '../../../shared/routing/admission-queue.ts'
import { routerSettings } from '../../../shared/routing/pool-options.ts'
import {
  type PoolLookup,
  PoolRouter,
  type RouteResult,
  type RoutingRequest,
} from '../../../shared/routing/pool-router.ts'
import { createKinferenceStrategy } from '../../../shared/routing/strategies/create-kinference-strategy.ts'

const spec = InferencePoolSpec.parse({
  selector: { matchLabels: {} },
  targetPort: 8000,
  models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
  gpuProfile: 'l40s-27b-fp8',
})

/**
 * One pod whose KV cache holds 4,096 tokens: a second 3,000-token prompt cannot start. The
 * queue routes with the router (which dispatches, and holds nothing itself here).
 */
function setup(options: { enabled?: boolean; maxHoldMs?: number; scanLimit?: number } = {}) {
  const admission = {
    enabled: options.enabled ?? true,
    maxHoldMs: options.maxHoldMs ?? 30_000,
    maxHeld: 100,
    scanLimit: options.scanLimit ?? 16,
    stepBudget: 2048,
  }
  const router = new PoolRouter({
    name: 'p',
    spec,
    index: createMemoryKvIndex(),
    random: () => 0.5,
    indexNowMs: () => 0,
    onError: (message) => {
      throw new Error(message)
    },
    settings: {
      ...routerSettings(spec),
      strategy: createKinferenceStrategy({ stepBudget: 2048, copyHeadroom: 0.85 }),
      stepBudget: 2048,
      prior: { overheadMs: 40, msPerToken: 0.15 },
      onlineCalibration: false,
      forgettingFactor: 0.98,
      driftTolerance: 0.25,
      metricsStalenessMs: 2_000,
      unhealthyCooldownMs: 5_000,
      kvCapacityTokens: 4_096,
      stepCost: { decodeStepMs: 40, msPerContextToken: 2e-4 },
      admission: { ...admission, enabled: false },
    },
  })
  router.addPod('a', 0)
  router.setIndexReady('a', true)
  const queue = new AdmissionQueue<string>(router, admission)
  /** Sends the request to the pod `route` chose, as the router does once the queue lets it go. */
  const dispatch = (id: string, route: RouteResult | null, nowMs: number) =>
    router.dispatchNow(lookup(id), nowMs, { route: route ?? undefined })
  return { router, queue, dispatch }
}

const request = (id: string, promptTokens = 3_000): RoutingRequest => ({
  id,
  model: 'm',
  promptTokens,
  blockSize: 16,
  promptText: '',
  maxTokens: 16,
  blockKeys: new Uint32Array(0),
})
const lookup = (id: string): PoolLookup => ({
  request: { routing: request(id), keys: new Uint32Array(0) },
  blocks: new Map([['a', 0]]),
})
const held = (id: string, sinceMs = 0): HeldRequest<string> => ({
  lookup: lookup(id),
  sinceMs,
  payload: id,
})

describe('AdmissionQueue', () => {
  it('routes at once what its pod can start, holds what it cannot, and releases it when the pod frees up', () => {
    const { router, queue, dispatch } = setup()
    const first = queue.offer(held('r1'), 0)
    expect(first?.decision.pod).toBe('a')
    dispatch('r1', first, 0)
    expect(queue.offer(held('r2'), 1)).toBeNull()
    expect(queue.size).toBe(1)
    const released: string[] = []
    queue.release(2, (entry) => released.push(entry.payload))
    expect(released).toEqual([]) // r1 still holds the memory
    router.firstToken('r1', 3)
    router.finished('r1', 4, 0)
    queue.release(5, (entry, route) => {
      released.push(entry.payload)
      expect(route.decision.pod).toBe('a')
    })
    expect(released).toEqual(['r2'])
    expect(queue.size).toBe(0)
  })

  it('holds nothing when off, and lets a request go once held for maxHoldMs', () => {
    const off = setup({ enabled: false })
    off.dispatch('r1', off.queue.offer(held('r1'), 0), 0)
    expect(off.queue.offer(held('r2'), 1)).not.toBeNull()

    const { queue, dispatch } = setup({ maxHoldMs: 100 })
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    expect(queue.offer(held('r2', 0), 0)).toBeNull()
    const released: string[] = []
    queue.release(50, (entry) => released.push(entry.payload))
    expect(released).toEqual([])
    queue.release(100, (entry) => released.push(entry.payload))
    expect(released).toEqual(['r2'])
  })

  it('takes out a request whose client left, and hands the rest back on drain', () => {
    const { queue, dispatch } = setup()
    dispatch('r1', queue.offer(held('r1'), 0), 0)
    const gone = held('r2')
    queue.offer(gone, 1)
    queue.offer(held('r3'), 1)
    expect(queue.remove(gone)).toBe(true)
    expect(queue.remove(gone)).toBe(false)
    expect(queue.size).toBe(1)
    expect(queue.drain().map((entry) => entry.payload)).toEqual(['r3'])
    expect(queue.size).toBe(0)
  })
})
