import { describe, expect, it } from 'vitest'
import { benchPresets } from '../../../../../../control-plane/lab/bench/bench-presets.ts'
import {
  staleIndexScenario,
  staleTiming,
} from '../../../../../../control-plane/lab/bench/suite/routing/routing-scenarios.ts'
import type { RunSummary } from '../../../../../../control-plane/lab/bench/suite/targets/run-summary.ts'
import type { CapacityOutcome } from '../../../../../../control-plane/lab/bench/suite/targets/scenario-runs.ts'
import type {
  Probe,
  TargetsContext,
} from '../../../../../../control-plane/lab/bench/suite/targets/targets-context.ts'

const capacity = (seed: number, rate: number): CapacityOutcome => ({
  preset: benchPresets['shared-prefix'] as never,
  router: 'kinference',
  seed,
  replicas: 1,
  result: { rate, steps: [], converged: true },
  atCapacity: null,
  fluidRps: 10,
})

/** Runs whose p90 TTFT is `fresh` s, or `stale` s once the events are late and lost. */
function contextWith(fresh: number, stale: number, probes: Probe[]): TargetsContext {
  return {
    seeds: [7, 11],
    requestScale: 1,
    async run(probe: Probe) {
      probes.push(probe)
      const p90 = probe.timing ? stale : fresh
      return {
        router: probe.router,
        seed: probe.seed,
        rate: probe.rate,
        ttftP90S: p90 + probe.seed / 1000,
      } as RunSummary
    },
  } as unknown as TargetsContext
}

describe('the stale-index target', () => {
  it('runs kinference at 90% of its own capacity, stale and fresh on the same seeds, and judges the p90 within 1.2x', async () => {
    const probes: Probe[] = []
    const ours = [capacity(7, 8), capacity(11, 9)]
    const met = await staleIndexScenario(contextWith(1.0, 1.19, probes), ours)
    expect(met.targets.map((t) => t.verdict)).toEqual(['met'])
    expect(met.targets[0]?.detail).toBe(
      'kinference 1.20 (1.20–1.20) vs kinference (fresh index) 1.01 (1.01–1.01) (× 1.2 = 1.211) s at 7.65 req/s',
    )
    expect(new Set(probes.map((p) => p.rate))).toEqual(new Set([7.65]))
    expect(probes.map((p) => [p.router, p.seed, p.timing ?? null])).toEqual([
      ['kinference', 7, null],
      ['kinference', 11, null],
      ['kinference', 7, staleTiming],
      ['kinference', 11, staleTiming],
    ])
    const missed = await staleIndexScenario(contextWith(1.0, 1.3, []), ours)
    expect(missed.targets[0]?.verdict).toBe('not met')
  })

  it('is not met, with no runs, when kinference passed at no rate', async () => {
    const probes: Probe[] = []
    const none = await staleIndexScenario(contextWith(1, 1, probes), [capacity(7, 0)])
    expect(none.targets[0]).toMatchObject({ verdict: 'not met' })
    expect(probes).toEqual([])
  })
})
