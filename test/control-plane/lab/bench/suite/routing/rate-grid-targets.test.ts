import { describe, expect, it } from 'vitest'
import { benchPresets } from '../../../../../../control-plane/lab/bench/bench-presets.ts'
import {
  gridRates,
  rateTargets,
  workloadCapacity,
} from '../../../../../../control-plane/lab/bench/suite/routing/rate-grid-targets.ts'
import type { RunSummary } from '../../../../../../control-plane/lab/bench/suite/targets/run-summary.ts'
import type { CapacityOutcome } from '../../../../../../control-plane/lab/bench/suite/targets/scenario-runs.ts'

const outcome = (router: string, seed: number, rate: number | null): CapacityOutcome => ({
  preset: benchPresets['shared-prefix'] as never,
  router,
  seed,
  replicas: 1,
  result: { rate, steps: [], converged: true },
  atCapacity: null,
  fluidRps: 10,
})

/** A run's figures: TTFT median and p90, e2e p90 (s). */
const run = (router: string, seed: number, [median, p90, e2e]: number[]): RunSummary =>
  ({
    router,
    seed,
    rate: 5,
    ttftMedianS: median,
    ttftP90S: p90,
    e2eP90S: e2e,
    stability: { stable: true },
  }) as RunSummary

describe('the routing grid', () => {
  it("scales to the best peer's mean capacity, never kinference's, a failed bisection as 0", () => {
    const capacity = workloadCapacity([
      outcome('kinference', 7, 20),
      outcome('kinference', 11, 20),
      outcome('gie-default', 7, 8),
      outcome('gie-default', 11, 6),
      outcome('round-robin', 7, 9),
      outcome('round-robin', 11, null),
    ])
    expect(capacity).toEqual({ router: 'gie-default', spread: { mean: 7, min: 6, max: 8 } })
    expect(workloadCapacity([outcome('kinference', 7, 9), outcome('rr', 7, null)])).toBeNull()
    expect(gridRates(7.04)).toEqual([
      { fraction: 0.5, rate: 3.52 },
      { fraction: 0.75, rate: 5.28 },
      { fraction: 0.9, rate: 6.34 },
      { fraction: 1, rate: 7.04 },
      { fraction: 1.25, rate: 8.8 },
      { fraction: 1.5, rate: 10.6 },
    ])
  })

  it('judges each latency within 1.02x of the best peer on the means over seeds', () => {
    const runs = [
      run('kinference', 7, [1.0, 2.0, 10]),
      run('kinference', 11, [1.03, 2.2, 12]),
      run('gie-default', 7, [1.0, 2.0, 10]),
      run('gie-default', 11, [1.0, 2.0, 10]),
      run('round-robin', 7, [1.1, 1.8, 30]),
    ]
    const targets = rateTargets('shared-prefix', 0.75, { rate: 5, runs })
    // Below 90% of capacity the 0.8x tail target is not asked.
    expect(targets.map((t) => [t.name, t.verdict])).toEqual([
      ["shared-prefix at 75% of capacity (5 req/s): median TTFT ≤ 1.02x the best peer's", 'met'],
      ["shared-prefix at 75% of capacity (5 req/s): p90 TTFT ≤ 1.02x the best peer's", 'not met'],
      ["shared-prefix at 75% of capacity (5 req/s): p90 e2e ≤ 1.02x the best peer's", 'not met'],
    ])
    // Each figure has its own best peer: gie's median, round robin's p90, gie's e2e.
    expect(targets[0]?.detail).toContain('vs gie-default 1.00 s (× 1.02 = 1.020 s)')
    expect(targets[1]?.detail).toBe(
      'kinference 2.10 (2.00–2.20) s vs round-robin 1.80 s (× 1.02 = 1.836 s)',
    )
    expect(targets[2]?.detail).toContain('vs gie-default 10.0 s')
  })

  it('asks p90 TTFT ≤ 0.8x the best peer from 90% of capacity up', () => {
    const runs = [
      run('kinference', 7, [1, 1.6, 10]),
      run('gie-default', 7, [1, 2.0, 10]),
      run('round-robin', 7, [1.1, 3, 12]),
    ]
    const at90 = rateTargets('b2b', 0.9, { rate: 5, runs })
    expect(at90.map((t) => t.verdict)).toEqual(['met', 'met', 'met', 'met'])
    expect(at90[3]?.name).toBe("b2b at 90% of capacity (5 req/s): p90 TTFT ≤ 0.8x the best peer's")
    const slower = runs.map((r) => (r.router === 'kinference' ? { ...r, ttftP90S: 1.61 } : r))
    expect(rateTargets('b2b', 1.5, { rate: 5, runs: slower })[3]?.verdict).toBe('not met')
  })
})
