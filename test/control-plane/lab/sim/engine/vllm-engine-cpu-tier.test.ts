import { describe, expect, it } from 'vitest'
import type { EngineKvEvent } from '../../../../../control-plane/lab/sim/engine/engine-kv-event.ts'
import type {
  StepResult,
  VllmEngine,
} from '../../../../../control-plane/lab/sim/engine/vllm-engine.ts'
import { kvBytesPerToken } from '../../../../../shared/gpu/gpu-profile.ts'
import {
  drainEngine,
  range,
  engineRequest as request,
  runInTurn,
  simEngine,
  smallProfile,
} from '../../../../support/sim-engine.ts'

const kvTokens = 16 * 101
const bytesPerToken = kvBytesPerToken(smallProfile(kvTokens))

/**
 * An engine whose 100-block GPU cache has held three 800-token prompts in turn: the first
 * one's blocks are gone from the GPU and wait in the CPU tier. Returns when it is idle.
 */
function withFirstPromptInCpu(hostLinkBytesPerSecond?: number) {
  const engine = simEngine(kvTokens, 21, {
    cpuOffload: {
      capacityBlocks: 400,
      ...(hostLinkBytesPerSecond ? { hostLinkBytesPerSecond } : {}),
    },
  })
  const steps = runInTurn(engine, [
    request('r0', range(0, 800), 1),
    request('r1', range(10_000, 800), 1),
    request('r2', range(20_000, 800), 1),
  ])
  const last = steps.at(-1) as StepResult
  return { engine, steps, idleMs: last.startMs + last.durationMs }
}

const startOf = (steps: StepResult[], id: string) => {
  const step = steps.find((s) => s.started.some((r) => r.requestId === id))
  if (!step) throw new Error(`${id} never started`)
  const { numCachedTokens } = step.started.find((r) => r.requestId === id) as {
    numCachedTokens: number
  }
  return { atMs: step.startMs, numCachedTokens }
}

/** Adds requests (id, prompt, outputs) arriving at `atMs` and runs the engine until idle. */
function run(engine: VllmEngine, atMs: number, requests: [string, number[], number][]) {
  for (const [id, prompt, outputs] of requests)
    engine.add(request(id, prompt, outputs, { arrivalMs: atMs }))
  return drainEngine(engine, atMs).steps
}

describe('VllmEngine with a CPU tier: loads take the host link’s time', () => {
  it.each([
    [undefined, 25e9],
    [5e9, 5e9],
  ])(
    'starts a request hitting the CPU tier only after its tokens have crossed the link (%s B/s)',
    (option, bandwidth) => {
      const { engine, idleMs } = withFirstPromptInCpu(option)
      const steps = run(engine, idleMs, [['again', range(0, 800), 1]])
      const loadMs = ((800 * bytesPerToken) / bandwidth) * 1000
      const start = startOf(steps, 'again')
      expect(start.atMs - idleMs).toBeCloseTo(loadMs, 6)
      // Nothing of it ran meanwhile: its first step is the one that starts after the load.
      expect(steps[0]?.startMs).toBeCloseTo(idleMs + loadMs, 6)
    },
  )

  it('reports cached tokens as vLLM does: local and loaded, less the last token when all were', () => {
    const whole = withFirstPromptInCpu()
    const wholeSteps = run(whole.engine, whole.idleMs, [['again', range(0, 800), 1]])
    // 50 blocks loaded, the last prompt token computed again (_update_waiting_for_remote_kv).
    expect(startOf(wholeSteps, 'again').numCachedTokens).toBe(799)
    expect(whole.engine.stats).toMatchObject({
      externalPrefixCacheQueries: 4 * 800,
      externalPrefixCacheHits: 800,
    })
    const longer = withFirstPromptInCpu()
    const prompt = [...range(0, 800), ...range(90_000, 10)]
    const longerSteps = run(longer.engine, longer.idleMs, [['longer', prompt, 1]])
    expect(startOf(longerSteps, 'longer').numCachedTokens).toBe(800)
    expect(longer.engine.stats.externalPrefixCacheHits).toBe(800)
  })

  it('delays only the request that loads: one arriving with it and no CPU hit starts at once', () => {
    const { engine, idleMs } = withFirstPromptInCpu()
    const steps = run(engine, idleMs, [
      ['again', range(0, 800), 1],
      ['fresh', range(50_000, 200), 1],
    ])
    expect(startOf(steps, 'fresh')).toEqual({ atMs: idleMs, numCachedTokens: 0 })
    const loadMs = ((800 * bytesPerToken) / 25e9) * 1000
    expect(startOf(steps, 'again').atMs).toBeGreaterThanOrEqual(idleMs + loadMs)
  })

  it('keeps the other requests’ GPU work going while a load is under way', () => {
    // A slow link (1 GB/s): 800 tokens take 105 ms, several decode steps.
    const { engine, idleMs } = withFirstPromptInCpu(1e9)
    engine.add(request('busy', range(60_000, 100), 40, { arrivalMs: idleMs }))
    engine.add(request('again', range(0, 800), 1, { arrivalMs: idleMs + 1 }))
    const steps = drainEngine(engine, idleMs).steps
    const loadEndMs = (steps[1]?.startMs ?? 0) + ((800 * bytesPerToken) / 1e9) * 1000
    const during = steps.filter((s) => s.startMs > idleMs && s.startMs < loadEndMs)
    expect(during.length).toBeGreaterThan(2)
    for (const step of during) {
      expect(step.outputs.map((o) => o.requestId)).toEqual(['busy'])
      expect(step.started).toEqual([])
    }
    const start = startOf(steps, 'again')
    expect(start.atMs).toBeGreaterThanOrEqual(loadEndMs)
    expect(start.atMs).toBe(steps.find((s) => s.startMs >= loadEndMs)?.startMs)
    expect(start.numCachedTokens).toBe(799)
  })
})

describe('VllmEngine with a CPU tier: stores run behind the steps', () => {
  type Stored = Extract<EngineKvEvent, { type: 'BlockStored' }>
  const cpuStored = (step: StepResult) =>
    step.events.filter((e): e is Stored => e.type === 'BlockStored' && e.medium === 'CPU')

  it('announces a block on CPU in the batch of the step during which its copy completed, without lengthening a step', () => {
    const { steps } = withFirstPromptInCpu()
    const [first, second] = steps as [StepResult, StepResult]
    // r0's step computed and cached its 50 blocks on the GPU; the copies start as it ends.
    expect(first.events.map((e) => e.type === 'BlockStored' && e.medium)).toEqual(['GPU'])
    const gpu = (first.events[0] as Stored).blockHashes
    expect(cpuStored(second).map((e) => e.blockHashes[0])).toEqual(gpu)
    expect(cpuStored(second).every((e) => e.blockSize === 0 && e.tokenIds.length === 0)).toBe(true)
    // The same steps as without a tier: nothing was loaded, and copies take no step time.
    const gpuOnly = simEngine(kvTokens, 21)
    const timing = (all: StepResult[]) => all.map((s) => [s.startMs, s.durationMs])
    expect(
      timing(
        runInTurn(gpuOnly, [
          request('r0', range(0, 800), 1),
          request('r1', range(10_000, 800), 1),
          request('r2', range(20_000, 800), 1),
        ]),
      ),
    ).toEqual(timing(steps))
  })

  it('holds back a lookup until the blocks it needs have finished their copy to CPU', () => {
    // "evicted": the GPU evicts r0's blocks while computing r2, their copies start as r2's
    // step ends, and "again" arrives then: it waits for them, then for its own load.
    const engine = simEngine(kvTokens, 23, {
      cpuOffload: { capacityBlocks: 400, store: 'evicted' },
    })
    const steps = runInTurn(engine, [
      request('r0', range(0, 800), 1),
      request('r1', range(10_000, 800), 1),
      request('r2', range(20_000, 800), 1),
      request('again', range(0, 800), 1),
    ])
    const r2 = steps[2] as StepResult
    const copyMs = ((800 * bytesPerToken) / 25e9) * 1000
    const start = startOf(steps, 'again')
    expect(start.atMs).toBeCloseTo(r2.startMs + r2.durationMs + 2 * copyMs, 6)
    expect(start.numCachedTokens).toBe(799)
  })
})
