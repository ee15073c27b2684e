import { describe, expect, it } from 'vitest'
import { AdmissionQueue, type HeldRequest } from '../../../shared/routing/admission-queue.ts'
import { RouterCore } from '../../../shared/routing/router-core.ts'
import type { RoutingRequest } from '../../../shared/routing/routing-strategy.ts'
import { createKinferenceStrategy } from '../../../shared/routing/strategies/create-kinference-strategy.ts'

/** One pod whose KV cache holds 4,096 tokens: a second 3,000-token prompt cannot start. */
function setup(options: { enabled?: boolean; maxHoldMs?: number; scanLimit?: number } = {}) {
  const core = new RouterCore({
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
  })
  core.addPod('a')
  core.setIndexReady('a', true)
  const queue = new AdmissionQueue<string>(core, {
    enabled: options.enabled ?? true,
    maxHoldMs: options.maxHoldMs ?? 30_000,
    maxHeld: 100,
    scanLimit: options.scanLimit ?? 16,
  })
  return { core, queue }
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
const held = (id: string, sinceMs = 0): HeldRequest<string> => ({
  request: request(id),
  indexedBlocks: new Map([['a', 0]]),
  exclude: new Set(),
  sinceMs,
  payload: id,
})
const at = (nowMs: number) => ({ nowMs, random: () => 0.5 })

describe('AdmissionQueue', () => {
  it('routes at once what its pod can start, holds what it cannot, and releases it when the pod frees up', () => {
    const { core, queue } = setup()
    const first = queue.offer(held('r1'), at(0))
    expect(first?.decision.pod).toBe('a')
    core.dispatched(request('r1'), 'a', first as NonNullable<typeof first>, at(0))
    expect(queue.offer(held('r2'), at(1))).toBeNull()
    expect(queue.size).toBe(1)
    const released: string[] = []
    queue.release(at(2), (entry) => released.push(entry.payload))
    expect(released).toEqual([]) // r1 still holds the memory
    core.firstToken('r1', 3)
    core.finished('r1', 4, 0)
    queue.release(at(5), (entry, route) => {
      released.push(entry.payload)
      expect(route.decision.pod).toBe('a')
    })
    expect(released).toEqual(['r2'])
    expect(queue.size).toBe(0)
  })

  it('holds nothing when off, and lets a request go once held for maxHoldMs', () => {
    const off = setup({ enabled: false })
    const r1 = off.queue.offer(held('r1'), at(0))
    off.core.dispatched(request('r1'), 'a', r1 as NonNullable<typeof r1>, at(0))
    expect(off.queue.offer(held('r2'), at(1))).not.toBeNull()

    const { core, queue } = setup({ maxHoldMs: 100 })
    const first = queue.offer(held('r1'), at(0))
    core.dispatched(request('r1'), 'a', first as NonNullable<typeof first>, at(0))
    expect(queue.offer(held('r2', 0), at(0))).toBeNull()
    const released: string[] = []
    queue.release(at(50), (entry) => released.push(entry.payload))
    expect(released).toEqual([])
    queue.release(at(100), (entry) => released.push(entry.payload))
    expect(released).toEqual(['r2'])
  })

  it('takes out a request whose client left, and hands the rest back on drain', () => {
    const { core, queue } = setup()
    const first = queue.offer(held('r1'), at(0))
    core.dispatched(request('r1'), 'a', first as NonNullable<typeof first>, at(0))
    const gone = held('r2')
    queue.offer(gone, at(1))
    queue.offer(held('r3'), at(1))
    expect(queue.remove(gone)).toBe(true)
    expect(queue.remove(gone)).toBe(false)
    expect(queue.size).toBe(1)
    expect(queue.drain().map((entry) => entry.payload)).toEqual(['r3'])
    expect(queue.size).toBe(0)
  })
})
