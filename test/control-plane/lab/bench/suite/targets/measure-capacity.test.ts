import { afterAll, describe, expect, it } from 'vitest'
import { benchPresets } from '../../../../../../control-plane/lab/bench/bench-presets.ts'
import { steadyStateRequests } from '../../../../../../control-plane/lab/bench/bounds/find-capacity.ts'
import { measureCapacity } from '../../../../../../control-plane/lab/bench/suite/targets/scenario-runs.ts'
import { createTargetsContext } from '../../../../../../control-plane/lab/bench/suite/targets/targets-context.ts'
import { loadSimModelAssets } from '../../../../../../control-plane/lab/sim/sim-model-assets.ts'

// A tenth of the suite's runs on the simulator (seeded): small, so judged for what the
// search does with its runs (their length, stability, the ceiling), not for the figure.
const ctx = createTargetsContext({
  seeds: [42],
  routers: ['round-robin'],
  replicas: [1],
  pods: 3,
  threads: 1,
  assets: loadSimModelAssets(),
  requestScale: 0.1,
})
afterAll(() => ctx.close())
const preset = benchPresets['shared-prefix'] as NonNullable<(typeof benchPresets)['shared-prefix']>

describe('measureCapacity on the simulator', () => {
  it('fails an unstable run at the fluid bound and never runs or reports above the bound', async () => {
    const outcome = await measureCapacity(ctx, preset, 'round-robin', 42, 1)
    const presetBound = (await ctx.bounds(preset, 42)).fluid.requestsPerSecond
    // The ceiling is the bound of the longer stream the capacity runs carry.
    expect(outcome.fluidRps).toBeGreaterThan(presetBound)
    const steps = outcome.result.steps
    expect(steps[0]?.rate).toBe(outcome.fluidRps)
    // Round robin at the fluid bound falls behind: its queue trends, and it is not capacity.
    expect(steps[0]).toMatchObject({ stable: false, passed: false })
    expect(steps[0]?.why).toMatch(/trending|served/)
    for (const step of steps) {
      expect(step.rate).toBeLessThanOrEqual(outcome.fluidRps)
      if (step.passed) expect(step.stable).toBe(true)
    }
    // The run kept for the capacity is as long as the steady-state rule makes it.
    const rate = outcome.result.rate as number
    expect(rate).toBeGreaterThan(0)
    expect(rate).toBeLessThanOrEqual(outcome.fluidRps)
    expect(outcome.atCapacity?.requests).toBe(
      Math.max(ctx.requestsOf(preset), steadyStateRequests(rate, 0.1)),
    )
    expect(outcome.atCapacity?.stability.stable).toBe(true)
  }, 120_000)
})
