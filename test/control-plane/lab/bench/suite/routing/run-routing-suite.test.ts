import { describe, expect, it } from 'vitest'
import { runRoutingSuite } from '../../../../../../control-plane/lab/bench/suite/routing/run-routing-suite.ts'
import { loadSimModelAssets } from '../../../../../../control-plane/lab/sim/sim-model-assets.ts'

describe('the routing suite, at a smoke scale', () => {
  it('measures capacity on each pool, runs the grid on it and prints every target with its figure', async () => {
    const lines: string[] = []
    const report = await runRoutingSuite({
      seeds: [7],
      routers: ['round-robin', 'kinference'],
      pods: null,
      threads: 2,
      assets: loadSimModelAssets(),
      requestScale: 0.04,
      workloads: ['shared-prefix', 'prefix-heavy-4pods'],
      log: (line) => lines.push(line),
    })
    const names = report.targets.map((t) => t.name)
    for (const workload of ['shared-prefix', 'prefix-heavy-4pods']) {
      expect(names).toContain(`${workload}: capacity ≥ 1.1x the best peer's`)
      expect(names).toContain(`${workload}: capacity ≥ 0.9 of the fluid bound`)
      // Three latency targets at each of six rates, the 0.8x tail at four of them.
      expect(names.filter((n) => n.startsWith(`${workload} at `))).toHaveLength(22)
      expect(report.markdown).toContain(`### rate grid: ${workload}`)
    }
    // The grid's rates are fractions of round robin's capacity, the only peer here.
    const shared = report.json.workloads.find((w) => w.name === 'shared-prefix')
    expect(shared?.capacity?.router).toBe('round-robin')
    const half = Number((0.5 * (shared?.capacity?.mean ?? 0)).toPrecision(3))
    expect(names).toContain(
      `shared-prefix at 50% of capacity (${half} req/s): p90 e2e ≤ 1.02x the best peer's`,
    )
    // Each workload ran on its own pool size.
    expect(report.json.workloads.map((w) => [w.name, w.pods])).toEqual([
      ['shared-prefix', 3],
      ['prefix-heavy-4pods', 4],
    ])
    expect(report.markdown).toContain('### capacity: prefix-heavy-4pods (4 pods)')
    for (const wanted of [
      "multi-turn at 80 streams: p90 TTFT ≤ 0.85x the best peer's",
      "multi-turn at 80 streams: median TTFT ≤ the best peer's",
      "stale index (events 500 ms late, 10% lost): kinference's p90 TTFT ≤ 1.2x its fresh-index figure",
    ])
      expect(names).toContain(wanted)
    expect(
      names.filter((n) => / at [\d.]+ req\/s: (median|p90) TTFT within 1%/.test(n)),
    ).toHaveLength(12)
    // Multi-turn ran max(1000, 600) requests at the scale: 40.
    expect(lines.some((l) => l.startsWith('multi-turn concurrent@80 kinference seed 7'))).toBe(true)
    expect(report.markdown).toContain(
      '### multi-turn tails (1000 requests × scale): multi-turn at 80',
    )
    for (const target of report.targets) {
      expect(target.detail).not.toBe('')
      expect(['met', 'not met']).toContain(target.verdict)
    }
    expect(report.markdown).toMatch(/- (met|\*\*not met\*\*): shared-prefix at 90% of capacity/)
    expect(report.json.tally).toMatch(/^\d+ targets, \d+ met, \d+ not met, 0 not judged/)
  }, 180_000)
})
