import { describe, expect, it } from 'vitest'
import { benchPresets } from '../../../../../../control-plane/lab/bench/bench-presets.ts'
import type { CapacityOutcome } from '../../../../../../control-plane/lab/bench/suite/targets/scenario-runs.ts'
import {
  bestPeer,
  byRouter,
  capacityTargets,
  compareWith,
  compareWithBest,
} from '../../../../../../control-plane/lab/bench/suite/targets/target-checks.ts'

const samples = (values: Record<string, number[]>) =>
  Object.entries(values).flatMap(([router, list]) => list.map((value) => ({ router, value })))

describe('the targets suite’s comparisons', () => {
  it('average each router over its seeds, and pick the best peer, never kinference', () => {
    const spreads = byRouter(samples({ kinference: [1, 3], gie: [2, 2], rr: [5, 7] }))
    expect(spreads.get('kinference')).toEqual({ mean: 2, min: 1, max: 3 })
    expect(bestPeer(spreads)?.router).toBe('gie')
    expect(bestPeer(spreads, true)?.router).toBe('rr')
  })

  it('judge kinference against the best peer on the mean, scaled, in either direction', () => {
    const ttft = samples({ kinference: [0.9, 1.1], gie: [1.2, 1.2], rr: [3, 3] })
    expect(compareWithBest('median', ttft)).toMatchObject({ verdict: 'met' })
    expect(compareWithBest('p90 0.85x', ttft, { factor: 0.85 })).toMatchObject({
      verdict: 'met',
      detail: 'kinference 1.00 (0.900–1.10) vs gie 1.20 (× 0.85 = 1.020)',
    })
    expect(compareWithBest('p90 0.8x', ttft, { factor: 0.8 }).verdict).toBe('not met')
    const served = samples({ kinference: [7], gie: [7.5] })
    expect(compareWithBest('served', served, { higher: true }).verdict).toBe('not met')
    expect(compareWithBest('nobody', samples({ kinference: [1] }))).toEqual({
      name: 'nobody',
      verdict: 'not met',
      detail: 'not measured',
    })
  })

  it('compare with one named router, and miss when it was not measured', () => {
    const preemptions = samples({ kinference: [300, 340], 'llmd-sticky': [335] })
    expect(compareWith('≤ sticky', preemptions, 'llmd-sticky', 1).verdict).toBe('met')
    expect(compareWith('≤ 0.45 rr', preemptions, 'round-robin', 0.45).detail).toBe('not measured')
  })

  it('count a router that passed at no rate as capacity 0, and compare with the fluid bound', () => {
    const outcome = (router: string, rate: number | null, converged = true): CapacityOutcome => ({
      preset: benchPresets['shared-prefix'] as never,
      router,
      seed: 1,
      replicas: 1,
      result: { rate, steps: [], converged },
      atCapacity: null,
      fluidRps: 10,
    })
    const [peers, bound] = capacityTargets('shared-prefix', [
      outcome('kinference', 9.2),
      outcome('gie-default', 9.5, false),
      outcome('round-robin', null),
    ])
    expect(peers).toMatchObject({ verdict: 'not met' })
    expect(bound).toMatchObject({ verdict: 'met' })
    expect(bound?.detail).toContain('(92%)')
    const [, none] = capacityTargets('x', [outcome('kinference', null, false)])
    expect(none).toMatchObject({ verdict: 'not met' })
    expect(none?.detail).toContain('1 bisections did not converge')
  })
})
