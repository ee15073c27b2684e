import {
  SimKvEventsOptions,
  type SimKvEventsOptionsInput,
} from '../../control-plane/lab/sim/engine/kv-events-options.ts'
import {
  type EngineRequestInput,
  type StepResult,
  VllmEngine,
} from '../../control-plane/lab/sim/engine/vllm-engine.ts'
import { type GpuProfile, l40s27bFp8 } from '../../shared/gpu/gpu-profile.ts'
import { createSeededRandom } from '../../shared/random/create-seeded-random.ts'

/** The reference profile with a small KV cache, to reach eviction and preemption quickly. */
export function smallProfile(kvTokens: number): GpuProfile {
  const maxModelLen = Math.min(l40s27bFp8.model.maxModelLen, kvTokens - 16)
  return {
    ...l40s27bFp8,
    model: { ...l40s27bFp8.model, maxModelLen },
    kvCacheBytes: kvTokens * 131_072,
    jitter: 0,
  }
}

export const range = (from: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => from + i)

export function engineRequest(
  id: string,
  prompt: number[],
  outputs: number,
  extra: Partial<EngineRequestInput> = {},
): EngineRequestInput {
  return {
    id,
    promptTokenIds: prompt,
    outputTokenIds: range(1000, outputs),
    finishReason: 'length',
    arrivalMs: 0,
    ...extra,
  }
}

/** An engine with `kvTokens` of cache, a seed and KV-event options. */
export function simEngine(
  kvTokens: number,
  seed: number,
  kvEvents: SimKvEventsOptionsInput = {},
  loraIds?: Map<string, number>,
): VllmEngine {
  return new VllmEngine({
    profile: smallProfile(kvTokens),
    random: createSeededRandom(seed),
    kvEvents: SimKvEventsOptions.parse(kvEvents),
    ...(loraIds ? { loraIds } : {}),
  })
}

/**
 * Runs the engine until idle in virtual time, collecting every step; when a step runs
 * nothing, it waits for what the engine waits for (a CPU-tier load), as the DES does.
 */
export function drainEngine(
  engine: VllmEngine,
  startMs = 0,
): { steps: StepResult[]; endMs: number } {
  const steps: StepResult[] = []
  let now = startMs
  for (;;) {
    const step = engine.step(now)
    if (step) {
      steps.push(step)
      now += step.durationMs
      continue
    }
    const next = engine.nextArrivalMs()
    if (next === null || next <= now) break
    now = next
  }
  return { steps, endMs: now }
}

/** Adds each request when the previous ones are done; every step of the run. */
export function runInTurn(engine: VllmEngine, requests: EngineRequestInput[]): StepResult[] {
  const steps: StepResult[] = []
  let now = 0
  for (const request of requests) {
    engine.add({ ...request, arrivalMs: now })
    const run = drainEngine(engine, now)
    steps.push(...run.steps)
    now = run.endMs
  }
  return steps
}
