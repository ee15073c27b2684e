import type { GpuProfile } from '../../../../shared/gpu/gpu-profile.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import { VllmEngine } from '../engine/vllm-engine.ts'

export interface EngineStepsResult {
  steps: number
  seconds: number
  stepsPerSecond: number
  meanRunning: number
  modelledSeconds: number
}

/**
 * Engine steps per second of CPU on one core, with `running` requests kept in flight
 * (a finished request is replaced at once): the figure the discrete-event benchmark
 * depends on. Prompts of 512 tokens, 512 output tokens, so the KV cache holds them all.
 */
export function measureEngineSteps(
  profile: GpuProfile,
  running: number,
  seconds: number,
  seed: number,
): EngineStepsResult {
  const random = createSeededRandom(seed)
  const engine = new VllmEngine({ profile, random })
  let next = 0
  const add = () => {
    const id = next++
    engine.add({
      id: `r${id}`,
      promptTokenIds: Array.from({ length: 512 }, (_, k) => (id * 7919 + k) % 150_000),
      outputTokenIds: Array.from({ length: 512 }, (_, k) => (id + k) % 150_000),
      finishReason: 'length',
      arrivalMs: 0,
    })
  }
  for (let i = 0; i < running; i++) add()
  let now = 0
  const step = () => {
    const result = engine.step(now)
    if (!result) throw new Error('engine went idle')
    now += result.durationMs
    for (const output of result.outputs) if (output.finished) add()
  }
  // Warm up past the first prefills, so the figure is the steady state.
  for (let i = 0; i < 2_000; i++) step()
  const modelledStart = now
  let steps = 0
  let runningSum = 0
  const start = performance.now()
  while (performance.now() - start < seconds * 1000) {
    for (let i = 0; i < 500; i++) {
      step()
      runningSum += engine.stats.running
    }
    steps += 500
  }
  const elapsed = (performance.now() - start) / 1000
  return {
    steps,
    seconds: elapsed,
    stepsPerSecond: steps / elapsed,
    meanRunning: runningSum / steps,
    modelledSeconds: (now - modelledStart) / 1000,
  }
}
