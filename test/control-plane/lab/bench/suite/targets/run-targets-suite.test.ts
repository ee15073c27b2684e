import { describe, expect, it } from 'vitest'
import { runTargetsSuite } from '../../../../../../control-plane/lab/bench/suite/targets/run-targets-suite.ts'
import { loadSimModelAssets } from '../../../../../../control-plane/lab/sim/sim-model-assets.ts'

describe('the targets suite, at a smoke scale', () => {
  it('runs every scenario and prints every target, met or not, with its figure', async () => {
    const lines: string[] = []
    const report = await runTargetsSuite({
      seeds: [42],
      routers: ['round-robin', 'kinference'],
      replicas: [1, 2],
      pods: 3,
      threads: 2,
      assets: loadSimModelAssets(),
      requestScale: 0.04,
      log: (line) => lines.push(line),
    })
    const names = report.targets.map((t) => t.name)
    for (const wanted of [
      "shared-prefix: capacity ≥ every peer's",
      'b2b: capacity ≥ 0.9 of the fluid bound',
      "mixed-tenants: capacity ≥ every peer's",
      "overload closed: preemptions ≤ llm-d sticky's",
      "overload open: SLO goodput ≥ every peer's",
      "multi-turn at 80 streams: p90 TTFT ≤ 0.85x the best peer's",
      "mooncake: mean TTFT ≤ 0.45x round robin's",
      'mooncake: hit rate ≥ 0.95 of the capacity-constrained ceiling',
      'fan-out: duplicate-prefill ratio ≤ 1.05',
      'shared-prefix, the target table: median TTFT ≥ 22x lower than round robin',
      'multi-turn, the target table: median TTFT ≥ 2.9x lower than round robin',
      "shared-prefix (2 scorer replicas): capacity ≥ every peer's",
      "overload closed (2 scorer replicas): median TTFT ≤ the best peer's",
      "multi-turn at 80 streams (2 scorer replicas): median TTFT ≤ the best peer's",
    ])
      expect(names).toContain(wanted)
    expect(names.filter((n) => n.startsWith('no-prefix at '))).toHaveLength(6)
    expect(names.filter((n) => n.startsWith('reasoning at '))).toHaveLength(6)
    for (const target of report.targets) expect(target.detail).not.toBe('')
    // The Mooncake trace ran on its own profile's pods, at a speed the suite chose.
    expect(lines.some((l) => l.startsWith('mooncake trace@'))).toBe(true)
    expect(report.markdown).toContain('### capacity: b2b')
    expect(report.markdown).toContain(
      '### stale index (events 1000 ms late, 20% lost): shared-prefix',
    )
    expect(report.markdown).toMatch(/- (met|\*\*not met\*\*): fan-out: p50 TTFT/)
    // A target-table ratio against an unstable round robin is not judged, whatever it is.
    for (const target of report.targets.filter((t) => t.name.includes('the target table')))
      expect(target.verdict === 'baseline unstable').toBe(
        target.detail.includes('baseline unstable'),
      )
  }, 120_000)
})
