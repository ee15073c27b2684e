import { describe, expect, it } from 'vitest'
import {
  type StepResult,
  VllmEngine,
} from '../../../../../control-plane/lab/sim/engine/vllm-engine.ts'
import { l40s27bFp8 } from '../../../../../shared/gpu/gpu-profile.ts'
import { createSeededRandom } from '../../../../../shared/random/create-seeded-random.ts'

// A request with no output tokens is a pooling request (an embedding): it is scheduled
// and chunked as any prefill, and ends with one `pooled` output when its prompt is done.

const profile = { ...l40s27bFp8, jitter: 0 }
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)

function drain(engine: VllmEngine): StepResult[] {
  const steps: StepResult[] = []
  let now = 0
  for (let step = engine.step(now); step; step = engine.step(now)) {
    steps.push(step)
    now += step.durationMs
  }
  return steps
}

describe('a prefill-only request in the engine', () => {
  it('runs its prompt in chunks and ends with one pooled output, holding no blocks', () => {
    const engine = new VllmEngine({ profile, random: createSeededRandom(1) })
    const promptTokens = profile.scheduler.maxNumBatchedTokens + 100
    engine.add({
      id: 'embd-1-0',
      promptTokenIds: range(10, promptTokens),
      outputTokenIds: [],
      finishReason: 'stop',
      arrivalMs: 0,
    })
    const steps = drain(engine)
    expect(steps.map((step) => step.scheduledTokens)).toEqual([
      profile.scheduler.maxNumBatchedTokens,
      100,
    ])
    expect(steps.flatMap((step) => step.outputs)).toEqual([
      { requestId: 'embd-1-0', tokenId: -1, index: 0, finished: 'stop', pooled: true },
    ])
    expect(engine.hasWork()).toBe(false)
    expect(engine.stats.kvCacheUsage).toBe(0)
  })

  it('shares steps with a generating request, which still gets its tokens', () => {
    const engine = new VllmEngine({ profile, random: createSeededRandom(1) })
    engine.add({
      id: 'gen',
      promptTokenIds: range(1, 32),
      outputTokenIds: [7, 8],
      finishReason: 'length',
      arrivalMs: 0,
    })
    engine.add({
      id: 'pool',
      promptTokenIds: range(100, 32),
      outputTokenIds: [],
      finishReason: 'stop',
      arrivalMs: 0,
    })
    const outputs = drain(engine).flatMap((step) => step.outputs)
    expect(outputs.map((o) => [o.requestId, o.index, o.pooled ?? false])).toEqual([
      ['gen', 0, false],
      ['pool', 0, true],
      ['gen', 1, false],
    ])
  })
})
