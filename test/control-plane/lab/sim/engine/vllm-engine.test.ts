import { describe, expect, it } from 'vitest'
import {
  type EngineRequestInput,
  type StepResult,
  VllmEngine,
} from '../../../../../control-plane/lab/sim/engine/vllm-engine.ts'
import { type GpuProfile, l40s27bFp8 } from '../../../../../shared/gpu/gpu-profile.ts'
import { createSeededRandom as seeded } from '../../../../../shared/random/create-seeded-random.ts'

/** The reference profile with a small KV cache, to reach eviction and preemption quickly. */
function smallProfile(kvTokens: number, overrides: Partial<GpuProfile> = {}): GpuProfile {
  const maxModelLen = Math.min(l40s27bFp8.model.maxModelLen, kvTokens - 16)
  return {
    ...l40s27bFp8,
    model: { ...l40s27bFp8.model, maxModelLen },
    kvCacheBytes: kvTokens * 131_072,
    jitter: 0,
    ...overrides,
  }
}

function request(id: string, prompt: number[], outputs: number, arrivalMs = 0): EngineRequestInput {
  return {
    id,
    promptTokenIds: prompt,
    outputTokenIds: Array.from({ length: outputs }, (_, i) => 1000 + i),
    finishReason: 'length',
    arrivalMs,
  }
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)

/** Runs the engine until idle in virtual time, collecting every step. */
function drain(engine: VllmEngine, startMs = 0): { steps: StepResult[]; endMs: number } {
  const steps: StepResult[] = []
  let now = startMs
  for (let step = engine.step(now); step; step = engine.step(now)) {
    steps.push(step)
    now += step.durationMs
  }
  return { steps, endMs: now }
}

function firstTokenMs(steps: StepResult[], id: string): number {
  const step = steps.find((s) => s.outputs.some((o) => o.requestId === id && o.index === 0))
  if (!step) throw new Error(`no first token for ${id}`)
  return step.startMs + step.durationMs
}

describe('VllmEngine', () => {
  it('prefills in chunks of the token budget, then decodes exactly the planned tokens', () => {
    const engine = new VllmEngine({ profile: smallProfile(50_000), random: seeded(1) })
    engine.add(request('a', range(1, 5000), 8))
    const { steps } = drain(engine)
    expect(steps.map((s) => s.scheduledTokens)).toEqual([2048, 2048, 904, 1, 1, 1, 1, 1, 1, 1])
    const outputs = steps.flatMap((s) => s.outputs)
    expect(outputs.map((o) => o.tokenId)).toEqual(range(1000, 8))
    expect(outputs.at(-1)?.finished).toBe('length')
    expect(engine.stats.kvCacheUsage).toBe(0)
  })

  it('models the reference step times of docs/vllm-wire.md §5.3', () => {
    const engine = new VllmEngine({ profile: smallProfile(50_000), random: seeded(1) })
    engine.add(request('a', range(1, 2048), 2))
    const [prefill, decode] = drain(engine).steps
    expect(prefill?.durationMs).toBeCloseTo(296, -1)
    expect(decode?.durationMs).toBeCloseTo(44, 0)
  })

  it('announces full prompt and generated blocks with BlockStored, chained by parent hash', () => {
    const engine = new VllmEngine({ profile: smallProfile(50_000), random: seeded(2) })
    engine.add(request('a', range(1, 40), 30))
    const stored = drain(engine)
      .steps.flatMap((s) => s.events)
      .filter((e) => e.type === 'BlockStored')
    const blocks = stored.flatMap((e) => (e.type === 'BlockStored' ? e.blockHashes : []))
    // 40 prompt tokens + 29 computed outputs = 69 computed tokens: 4 full blocks.
    expect(blocks).toHaveLength(4)
    expect(new Set(blocks).size).toBe(4)
    const first = stored[0]
    const second = stored[1]
    expect(first?.type === 'BlockStored' && first.parentBlockHash).toBe(null)
    expect(first?.type === 'BlockStored' && first.tokenIds).toEqual(range(1, 32))
    expect(second?.type === 'BlockStored' && second.parentBlockHash).toBe(blocks[1])
    expect(second?.type === 'BlockStored' && second.tokenIds).toEqual([
      ...range(33, 8),
      ...range(1000, 8),
    ])
  })

  it('hits the prefix cache on a repeated prefix, capped below the whole prompt', () => {
    const engine = new VllmEngine({ profile: smallProfile(50_000), random: seeded(3) })
    engine.add(request('a', range(1, 4096), 4))
    const first = drain(engine)
    engine.add(request('b', [...range(1, 4096), 7, 8, 9], 4, first.endMs))
    const second = drain(engine, first.endMs)
    expect(first.steps[0]?.started).toEqual([{ requestId: 'a', numCachedTokens: 0 }])
    expect(second.steps[0]?.started).toEqual([{ requestId: 'b', numCachedTokens: 4096 }])
    engine.add(request('c', range(1, 4096), 4, second.endMs))
    expect(drain(engine, second.endMs).steps[0]?.started).toEqual([
      { requestId: 'c', numCachedTokens: 4080 },
    ])
    expect(engine.stats.prefixCacheHits).toBe(4096 + 4080)
    expect(engine.stats.prefixCacheQueries).toBe(4096 + 4099 + 4096)
    const cold = firstTokenMs(first.steps, 'a') - (first.steps[0]?.startMs ?? 0)
    const warm = firstTokenMs(second.steps, 'b') - (second.steps[0]?.startMs ?? 0)
    expect(warm).toBeLessThan(cold / 10)
  })

  it('evicts least recently freed blocks when the working set exceeds capacity, with BlockRemoved', () => {
    const engine = new VllmEngine({ profile: smallProfile(16 * 101), random: seeded(4) })
    let now = 0
    const removed: bigint[] = []
    for (let round = 0; round < 3; round++) {
      engine.add(request(`r${round}`, range(round * 10_000, 800), 1, now))
      const result = drain(engine, now)
      now = result.endMs
      for (const e of result.steps.flatMap((s) => s.events))
        if (e.type === 'BlockRemoved') removed.push(...e.blockHashes)
    }
    // 100 usable blocks, 50 per request: the third request evicts the first one's blocks.
    expect(removed).toHaveLength(50)
    engine.add(request('again', range(0, 800), 1, now))
    expect(drain(engine, now).steps[0]?.started[0]?.numCachedTokens).toBe(0)
  })

  it('preempts the newest running request by recompute when blocks run out', () => {
    const engine = new VllmEngine({ profile: smallProfile(16 * 41), random: seeded(5) })
    engine.add(request('old', range(1, 300), 200))
    engine.add(request('new', range(5000, 300), 200))
    const { steps } = drain(engine)
    const preempted = steps.flatMap((s) => s.preempted)
    expect(preempted[0]).toBe('new')
    expect(engine.stats.preemptions).toBe(preempted.length)
    const outputs = steps.flatMap((s) => s.outputs)
    for (const id of ['old', 'new']) {
      expect(outputs.filter((o) => o.requestId === id).map((o) => o.index)).toEqual(range(0, 200))
    }
  })

  it('makes TTFT grow with the queue in front of a request', () => {
    const ttftBehind = (queued: number) => {
      const engine = new VllmEngine({ profile: smallProfile(200_000), random: seeded(6) })
      for (let i = 0; i < queued; i++) engine.add(request(`q${i}`, range(i * 10_000, 3000), 16))
      engine.add(request('probe', range(999_000, 3000), 16))
      return firstTokenMs(drain(engine).steps, 'probe')
    }
    const ttfts = [0, 2, 4, 8].map(ttftBehind)
    for (let i = 1; i < ttfts.length; i++) expect(ttfts[i]).toBeGreaterThan(ttfts[i - 1] as number)
  })

  it('refuses a prefix-cache reset while blocks are in use and clears when idle', () => {
    const engine = new VllmEngine({ profile: smallProfile(50_000), random: seeded(7) })
    engine.add(request('a', range(1, 100), 3))
    engine.step(0)
    expect(engine.resetPrefixCache()).toBe(false)
    drain(engine)
    expect(engine.resetPrefixCache()).toBe(true)
    expect(engine.takeEvents()).toEqual([{ type: 'AllBlocksCleared' }])
    engine.add(request('b', range(1, 100), 1))
    expect(engine.step(0)?.started[0]?.numCachedTokens).toBe(0)
  })

  it('admits a request only once it has arrived, so a late caller cannot run it early', () => {
    const engine = new VllmEngine({ profile: smallProfile(50_000), random: seeded(9) })
    engine.add(request('later', range(1, 100), 2, 1000))
    expect(engine.step(0)).toBe(null)
    expect(engine.nextArrivalMs()).toBe(1000)
    expect(engine.step(1000)?.started).toEqual([{ requestId: 'later', numCachedTokens: 0 }])
  })

  it('refuses a KV cache smaller than max_model_len, as vLLM refuses to start', () => {
    const profile = { ...l40s27bFp8, kvCacheBytes: 1000 * 131_072 }
    expect(() => new VllmEngine({ profile, random: seeded(1) })).toThrow(/less than max_model_len/)
  })

  it('is deterministic for a seed, jitter included', () => {
    const run = (seed: number) => {
      const engine = new VllmEngine({ profile: { ...l40s27bFp8 }, random: seeded(seed) })
      for (let i = 0; i < 20; i++) engine.add(request(`r${i}`, range(i * 50, 700), 30))
      return drain(engine).steps.map((s) => [s.durationMs, s.events.length])
    }
    expect(run(42)).toEqual(run(42))
    expect(run(42)).not.toEqual(run(43))
  })

  it('frees an aborted request and keeps serving the others', () => {
    const engine = new VllmEngine({ profile: smallProfile(50_000), random: seeded(8) })
    engine.add(request('a', range(1, 3000), 50))
    engine.add(request('b', range(9000, 300), 5))
    engine.step(0)
    expect(engine.abort('a')).toBe(true)
    expect(engine.abort('a')).toBe(false)
    const outputs = drain(engine).steps.flatMap((s) => s.outputs)
    expect(outputs.every((o) => o.requestId === 'b')).toBe(true)
    expect(engine.stats.kvCacheUsage).toBe(0)
  })
})
