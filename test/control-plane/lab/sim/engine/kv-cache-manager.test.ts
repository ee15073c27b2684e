import { describe, expect, it } from 'vitest'
import type { EngineKvEvent } from '../../../../../control-plane/lab/sim/engine/engine-kv-event.ts'
import type {
  EngineRequestInput,
  StepResult,
} from '../../../../../control-plane/lab/sim/engine/vllm-engine.ts'
import {
  drainEngine,
  range,
  engineRequest as request,
  runInTurn,
  simEngine,
} from '../../../../support/sim-engine.ts'

type Stored = Extract<EngineKvEvent, { type: 'BlockStored' }>
const stored = (steps: StepResult[]): Stored[] =>
  steps.flatMap((s) => s.events).filter((e): e is Stored => e.type === 'BlockStored')
const cachedTokens = (steps: StepResult[]) =>
  steps.flatMap((s) => s.started).map((s) => s.numCachedTokens)

/** Conversations sharing a system prompt, each turn the last prompt, its answer and more. */
function multiTurnWorkload(): EngineRequestInput[] {
  const system = range(1, 200)
  const turns: number[][] = [0, 1, 2].map((c) => [...system, ...range(10_000 * (c + 1), 37)])
  const requests: EngineRequestInput[] = []
  for (let turn = 0; turn < 4; turn++) {
    turns.forEach((prompt, c) => {
      requests.push(request(`c${c}t${turn}`, [...prompt], 20))
      turns[c] = [...prompt, ...range(1000, 20), ...range(20_000 * (c + 1) + turn * 50, 29)]
    })
  }
  return requests
}

describe('KvCacheManager: hybrid models', () => {
  it('announces each group’s blocks with its group, spec and own block size', () => {
    const engine = simEngine(50_000, 1, {
      hybrid: { slidingWindow: 64, slidingWindowBlockSize: 32 },
    })
    engine.add(request('a', range(1, 300), 3))
    const [full, window] = stored(drainEngine(engine).steps)
    expect(full).toMatchObject({
      groupIdx: 0,
      blockSize: 16,
      kvCacheSpec: { kind: 'full_attention', slidingWindow: null },
      tokenIds: range(1, 288),
    })
    expect(window).toMatchObject({
      groupIdx: 1,
      blockSize: 32,
      kvCacheSpec: { kind: 'sliding_window', slidingWindow: 64 },
      tokenIds: range(1, 288),
    })
    expect(full?.blockHashes).toHaveLength(18)
    // A 32-token block's hash is the hash at its last 16-token boundary.
    expect(window?.blockHashes).toEqual(full?.blockHashes.filter((_, k) => k % 2 === 1))
  })

  it('frees sliding-window blocks the window has left, and evicts them first', () => {
    const engine = simEngine(16 * 101, 2, { hybrid: { slidingWindow: 64 } })
    engine.add(request('a', range(1, 800), 5))
    let now = 0
    for (const expected of [100, 56]) {
      const step = engine.step(now) as StepResult
      now += step.durationMs
      // 800 prompt tokens: 50 blocks per group; once decoding, the window keeps 4 + 1.
      expect(Math.round(engine.stats.kvCacheUsage * (engine.stats.numGpuBlocks - 1))).toBe(expected)
    }
    now = drainEngine(engine, now).endMs
    engine.add(request('b', range(50_000, 1500), 1, { arrivalMs: now }))
    const removed = drainEngine(engine, now)
      .steps.flatMap((s) => s.events)
      .flatMap((e) => (e.type === 'BlockRemoved' ? [e.groupIdx] : []))
    expect(removed.slice(0, 46)).toEqual(new Array(46).fill(1))
    expect(removed).toContain(0)
  })

  it.each([
    { slidingWindow: 64 },
    { slidingWindow: 128, slidingWindowGroups: 3, slidingWindowFirst: true },
  ])('has the hit rate of a pure-attention model on the same workload (%o)', (hybrid) => {
    const workload = multiTurnWorkload()
    const pure = simEngine(60_000, 3)
    const mixed = simEngine(60_000, 3, { hybrid })
    const pureHits = cachedTokens(runInTurn(pure, workload))
    const mixedHits = cachedTokens(runInTurn(mixed, workload))
    expect(mixedHits).toEqual(pureHits)
    expect(pureHits.filter((hit) => hit > 0).length).toBeGreaterThan(8)
    expect(mixed.stats.prefixCacheHits).toBe(pure.stats.prefixCacheHits)
    expect(mixed.stats.prefixCacheQueries).toBe(pure.stats.prefixCacheQueries)
  })

  it('finds no hit where the window’s blocks were evicted, though full attention kept its own', () => {
    const engine = simEngine(16 * 101, 4, { hybrid: { slidingWindow: 64 } })
    const steps = runInTurn(engine, [
      request('a', range(1, 800), 5),
      request('b', range(50_000, 1500), 1),
      request('again', range(1, 800), 1),
    ])
    expect(cachedTokens(steps)).toEqual([0, 0, 0])
    const pure = simEngine(16 * 101, 4)
    const pureSteps = runInTurn(pure, [
      request('a', range(1, 800), 5),
      request('b', range(50_000, 700), 1),
      request('again', range(1, 800), 1),
    ])
    expect(cachedTokens(pureSteps)[2]).toBeGreaterThan(0)
  })
})

describe('KvCacheManager: what enters a block', () => {
  it('keys multimodal inputs by identifier: different images with the same tokens do not match', () => {
    const prompt = range(1, 100)
    const image = (identifier: string) => ({
      multimodal: [{ identifier, offset: 20, length: 40 }],
    })
    const engine = simEngine(50_000, 5)
    const steps = runInTurn(engine, [
      request('a', prompt, 1, image('img-1')),
      request('b', prompt, 1, image('img-2')),
      request('c', prompt, 1, image('img-1')),
    ])
    // Block 0 (tokens 0-15) holds no image; block 1 starts 4 tokens before it.
    expect(cachedTokens(steps)).toEqual([0, 16, 96])
    const [first] = stored(steps)
    expect(first?.extraKeys?.slice(0, 5)).toEqual([
      null,
      [{ kind: 'mm', identifier: 'img-1', offset: 4, modality: 'image' }],
      [{ kind: 'mm', identifier: 'img-1', offset: -12, modality: 'image' }],
      [{ kind: 'mm', identifier: 'img-1', offset: -28, modality: 'image' }],
      null,
    ])
  })

  it('keys LoRA blocks by adapter name and numbers adapters as vLLM does, from 1', () => {
    const ids = new Map<string, number>()
    const engine = simEngine(50_000, 6, {}, ids)
    const prompt = range(1, 64)
    const steps = runInTurn(engine, [
      request('a', prompt, 1, { loraName: 'sql' }),
      request('b', prompt, 1, { loraName: 'chat' }),
      request('c', prompt, 1),
      request('d', prompt, 1, { loraName: 'sql' }),
    ])
    expect(cachedTokens(steps)).toEqual([0, 0, 0, 48])
    expect(stored(steps).map((e) => [e.loraName, e.loraId])).toEqual([
      ['sql', 1],
      ['chat', 2],
      [null, null],
      ['sql', 1],
    ])
    // A second engine of the same pod shares the numbering.
    const other = simEngine(50_000, 7, {}, ids)
    const [chat] = stored(runInTurn(other, [request('e', prompt, 1, { loraName: 'chat' })]))
    expect(chat?.loraId).toBe(2)
    expect(chat?.extraKeys?.[0]).toEqual([{ kind: 'lora', name: 'chat' }])
  })

  it('salts the first block only, after the LoRA name', () => {
    const engine = simEngine(50_000, 8)
    engine.add(request('a', range(1, 40), 1, { loraName: 'sql', cacheSalt: 'tenant' }))
    const [event] = stored(drainEngine(engine).steps)
    expect(event?.extraKeys).toEqual([
      [
        { kind: 'lora', name: 'sql' },
        { kind: 'cache_salt', salt: 'tenant' },
      ],
      [{ kind: 'lora', name: 'sql' }],
    ])
  })
})

describe('KvCacheManager: kv_cache_report_mode "full"', () => {
  const twice = (mode: object, second: Partial<EngineRequestInput> = {}) => {
    const engine = simEngine(50_000, 9, mode)
    const steps = runInTurn(engine, [
      request('a', range(1, 100), 1),
      request('b', [...range(1, 100), ...range(500, 20)], 1, second),
    ])
    return stored(steps)
  }

  it('announces the blocks a request reuses again, from the start, before the new ones', () => {
    const events = twice({ reportMode: 'full' })
    const [first, reused, fresh] = events
    expect(reused).toMatchObject({
      parentBlockHash: null,
      blockHashes: first?.blockHashes,
      tokenIds: range(1, 96),
    })
    expect(fresh?.parentBlockHash).toBe(first?.blockHashes.at(-1))
    expect(twice({})).toHaveLength(2)
  })

  it('follows the request’s own mode over the pod’s', () => {
    expect(twice({}, { kvCacheReportMode: 'full' })).toHaveLength(3)
    expect(twice({ reportMode: 'full' }, { kvCacheReportMode: 'incremental' })).toHaveLength(2)
  })
})

describe('KvCacheManager: CPU offload tier', () => {
  const rounds = (store: 'every-block' | 'evicted', selfDescribing = false) => {
    const engine = simEngine(16 * 101, 10, {
      cpuOffload: { capacityBlocks: 200, store, selfDescribing },
    })
    const steps = runInTurn(engine, [
      request('r0', range(0, 800), 1),
      request('r1', range(10_000, 800), 1),
      request('r2', range(20_000, 800), 1),
      request('again', range(0, 800), 1),
    ])
    return { engine, steps }
  }

  it.each(['every-block', 'evicted'] as const)(
    'brings evicted blocks back from CPU (%s): cached tokens count them as external',
    (store) => {
      const { engine, steps } = rounds(store)
      // All 50 blocks load, the last prompt token is computed again: vLLM reports 799.
      expect(cachedTokens(steps)).toEqual([0, 0, 0, 799])
      expect(engine.stats).toMatchObject({
        prefixCacheHits: 0,
        externalPrefixCacheHits: 800,
        externalPrefixCacheQueries: 4 * 800,
      })
      // The loaded blocks are cached on the GPU once loaded, then the recomputed last one.
      const gpu = stored(steps.slice(-1)).filter((e) => e.medium === 'GPU')
      expect(gpu.map((e) => e.tokenIds.length)).toEqual([784, 16])
      expect(gpu.flatMap((e) => e.tokenIds)).toEqual(range(0, 800))
    },
  )

  it('puts CPU events in the step’s batch after its GPU events', () => {
    const { steps } = rounds('every-block')
    const mixed = steps.filter(
      (s) => new Set(s.events.map((e) => 'medium' in e && e.medium)).size > 1,
    )
    expect(mixed.length).toBeGreaterThan(0)
    for (const step of mixed) {
      const media = step.events.map((e) => ('medium' in e ? e.medium : 'GPU'))
      expect(media.indexOf('CPU')).toBeGreaterThan(media.lastIndexOf('GPU'))
    }
    const cpu = stored(steps).filter((e) => e.medium === 'CPU')
    expect(cpu.every((e) => e.blockSize === 0 && e.tokenIds.length === 0)).toBe(true)
  })

  it('stores only what the GPU evicts in "evicted" mode, self-describing on request', () => {
    const { steps } = rounds('evicted', true)
    const removed = new Set(
      steps
        .flatMap((s) => s.events)
        .flatMap((e) => (e.type === 'BlockRemoved' ? e.blockHashes : [])),
    )
    const cpu = stored(steps).filter((e) => e.medium === 'CPU')
    expect(cpu.length).toBe(100)
    for (const event of cpu) {
      expect(removed.has(event.blockHashes[0] as bigint)).toBe(true)
      expect(event.blockSize).toBe(16)
      expect(event.tokenIds).toHaveLength(16)
    }
  })
})

describe('KvCacheManager: prefix-cache counters', () => {
  it('counts every lookup, retries included, and keeps preempted requests apart', () => {
    const engine = simEngine(16 * 41, 5)
    engine.add(request('old', range(1, 300), 200))
    engine.add(request('new', range(5000, 300), 200))
    engine.add(request('late', range(9000, 300), 20))
    const steps = drainEngine(engine).steps
    const { stats } = engine
    expect(steps.flatMap((s) => s.preempted).length).toBeGreaterThan(0)
    // Three admissions, and "late" looked up again at every step it could not get blocks.
    expect(stats.prefixCacheQueries % 300).toBe(0)
    expect(stats.prefixCacheQueries).toBeGreaterThan(3 * 300)
    // A victim re-hits its own blocks: counted apart, not in the exported hit rate.
    expect(stats.preemptedPrefixCacheQueries).toBeGreaterThan(0)
    expect(stats.preemptedPrefixCacheHits).toBeGreaterThan(0)
    expect(stats.prefixCacheHits).toBe(0)
  })
})

describe('KvCacheManager: determinism', () => {
  it('gives identical events for a seed with every variant on, and other hashes for another', () => {
    const run = (seed: number) => {
      const engine = simEngine(16 * 201, seed, {
        hybrid: { slidingWindow: 48, slidingWindowBlockSize: 32 },
        cpuOffload: { capacityBlocks: 50 },
        reportMode: 'full',
      })
      const requests = range(0, 12).map((i) =>
        request(`r${i}`, range((i % 4) * 1000, 300 + i), 8, {
          loraName: i % 3 === 0 ? 'sql' : null,
          multimodal: [{ identifier: `img-${i % 2}`, offset: 40, length: 30 }],
        }),
      )
      return runInTurn(engine, requests).map((s) => [s.durationMs, s.events])
    }
    expect(run(11)).toEqual(run(11))
    expect(run(11)).not.toEqual(run(12))
  })
})
