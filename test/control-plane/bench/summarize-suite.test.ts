import { describe, expect, it } from 'vitest'
import { type BenchPreset, benchPresets } from '../../../control-plane/bench/bench-presets.ts'
import type { BenchmarkRun, RequestRecord } from '../../../control-plane/bench/request-record.ts'
import {
  peakRate,
  type RatePoint,
  ratePoints,
  summarizeSuite,
} from '../../../control-plane/bench/summarize-suite.ts'
import type { ZeroQueueFloor } from '../../../control-plane/bench/zero-queue-floor.ts'

const preset = (name: string): BenchPreset => {
  const found = benchPresets[name]
  if (!found) throw new Error(`no preset ${name}`)
  return found
}

/**
 * A run whose requests have exactly these TTFTs (ms) and each the e2e latency `e2eMs`,
 * sent a second apart; all successful.
 */
function run(
  workload: string,
  router: string,
  rate: number,
  ttftsMs: readonly number[],
  e2eMs: number,
): BenchmarkRun {
  const records: RequestRecord[] = ttftsMs.map((ttft, i) => {
    const startMs = i * 1000
    return {
      id: `${router}-${rate}-${i}`,
      conversation: i,
      turn: 0,
      startMs,
      firstTokenMs: startMs + ttft,
      tokenTimesMs: [startMs + ttft, startMs + e2eMs],
      endMs: startMs + e2eMs,
      promptTokens: 100,
      outputTokens: 10,
      cachedTokens: 0,
      pod: 'sim-pod-0',
      error: null,
    }
  })
  return {
    config: {
      mode: 'des',
      router,
      workload,
      profile: `${preset(workload).profile}@${rate}`,
      rate,
      pods: 3,
      gpuProfile: 'l40s-27b-fp8',
      seed: 42,
      dataSpec: preset(workload).data,
    },
    startMs: 0,
    endMs: Math.max(...records.map((r) => r.endMs)),
    records,
    prefixCache: null,
    elapsedSeconds: 0.01,
  }
}

/** Five requests with TTFT median `ms` and p90 twice that. */
const spread = (ms: number) => [ms / 2, ms, (ms * 3) / 4, 2 * ms, ms]

const point = (rate: number, ttftMedianS: number): RatePoint => ({
  rate,
  ttftMedianS,
  ttftP90S: ttftMedianS,
  e2eMedianS: 1,
  achievedRps: rate,
})

describe('ratePoints', () => {
  it('gives each workload and router its points in ascending rate, TTFT in seconds', () => {
    const runs = [
      run('shared-prefix', 'round-robin', 4, spread(8000), 20_000),
      run('shared-prefix', 'kinference', 4, spread(300), 10_000),
      run('shared-prefix', 'round-robin', 1, spread(400), 12_000),
      run('no-prefix', 'round-robin', 2, spread(900), 15_000),
    ]
    const points = ratePoints(runs)
    expect([...points.keys()]).toEqual(['shared-prefix', 'no-prefix'])
    expect([...(points.get('shared-prefix')?.keys() ?? [])]).toEqual(['round-robin', 'kinference'])
    expect(points.get('shared-prefix')?.get('round-robin')).toEqual([
      { rate: 1, ttftMedianS: 0.4, ttftP90S: 0.8, e2eMedianS: 12, achievedRps: 5 / 16 },
      { rate: 4, ttftMedianS: 8, ttftP90S: 16, e2eMedianS: 20, achievedRps: 5 / 24 },
    ])
    expect(points.get('shared-prefix')?.get('kinference')).toEqual([
      { rate: 4, ttftMedianS: 0.3, ttftP90S: 0.6, e2eMedianS: 10, achievedRps: 5 / 14 },
    ])
    expect(points.get('no-prefix')?.get('round-robin')).toEqual([
      { rate: 2, ttftMedianS: 0.9, ttftP90S: 1.8, e2eMedianS: 15, achievedRps: 5 / 19 },
    ])
  })

  it('leaves failed requests out of the TTFT median', () => {
    const r = run('no-prefix', 'round-robin', 1, [100, 200, 300], 1000)
    const failed = r.records[0] as RequestRecord
    r.records[0] = { ...failed, firstTokenMs: null, tokenTimesMs: [], error: 'boom' }
    // Successful: 200 and 300; the inverted-CDF median of two values is the lower one.
    expect(ratePoints([r]).get('no-prefix')?.get('round-robin')?.[0]?.ttftMedianS).toBe(0.2)
  })
})

describe('peakRate', () => {
  it('is the highest rate whose median TTFT is within the SLO, the SLO itself included', () => {
    const points = [point(1, 0.2), point(2, 0.9), point(3, 1), point(4, 1.001), point(6, 7)]
    expect(peakRate(points, 1000)).toBe(3)
    expect(peakRate(points, 900)).toBe(2)
    expect(peakRate(points, 10_000)).toBe(6)
  })

  it('counts a rate within the SLO above one that is not', () => {
    expect(peakRate([point(1, 0.5), point(2, 1.5), point(4, 0.9)], 1000)).toBe(4)
  })

  it('is 0 when no rate is within the SLO, or there are no points', () => {
    expect(peakRate([point(1, 2), point(2, 3)], 1000)).toBe(0)
    expect(peakRate([], 1000)).toBe(0)
  })
})

/**
 * Shared-prefix runs at two rates for round robin (median TTFT 0.5 s, then 8 s),
 * kinference and least-request (the given medians, ms).
 */
function sharedPrefixRuns(
  kinferenceMs: [number, number],
  leastRequestMs: [number, number],
  rates: [number, number] = [1, 2],
) {
  const [low, high] = rates
  return [
    run('shared-prefix', 'round-robin', low, spread(500), 16_000),
    run('shared-prefix', 'kinference', low, spread(kinferenceMs[0]), 9_000),
    run('shared-prefix', 'least-request', low, spread(leastRequestMs[0]), 15_000),
    run('shared-prefix', 'round-robin', high, spread(8000), 20_000),
    run('shared-prefix', 'kinference', high, spread(kinferenceMs[1]), 10_000),
    run('shared-prefix', 'least-request', high, spread(leastRequestMs[1]), 18_000),
  ]
}

const targetMap = (targets: { name: string; met: boolean; detail: string }[]) =>
  Object.fromEntries(targets.map((t) => [t.name, { met: t.met, detail: t.detail }]))

describe('summarizeSuite', () => {
  it('puts our numbers at the top rate beside the brief’s', () => {
    const { markdown } = summarizeSuite(
      sharedPrefixRuns([250, 250], [400, 6000]),
      [preset('shared-prefix')],
      new Map(),
      1000,
    )
    const lines = markdown.split('\n')
    expect(lines).toContain(
      '| shared-prefix | median TTFT (s) @ poisson 2 | 6.88 | 0.310 | 8.00 | 0.250 | 32x |',
    )
    expect(lines).toContain('| shared-prefix | median e2e (s) | 20.5 | 11.3 | 20.0 | 10.0 | 2.0x |')
    // Round robin is within 1 s only at rate 1; kinference at both.
    expect(lines).toContain(
      '| shared-prefix | peak throughput (req/s) | 1x | 7.4x | 1 | 2 | 2.0x |',
    )
    expect(markdown).toContain('seed 42')
    expect(markdown).toContain('3 pods of l40s-27b-fp8')
  })

  it('has a per-strategy table at the top rate, with p90 and the gain over round robin', () => {
    const { markdown } = summarizeSuite(
      sharedPrefixRuns([250, 250], [400, 6000]),
      [preset('shared-prefix')],
      new Map<string, ZeroQueueFloor>([
        ['shared-prefix', { medianMs: 54, p90Ms: 61, requests: 600 }],
      ]),
      1000,
    )
    const lines = markdown.split('\n')
    expect(lines).toContain('| round-robin | 8.00 | 16.0 | 20.0 | 0.21 | 1.0x | 1 |')
    expect(lines).toContain('| kinference | 0.250 | 0.500 | 10.0 | 0.36 | 32x | 2 |')
    expect(lines).toContain('| least-request | 6.00 | 12.0 | 18.0 | 0.23 | 1.3x | 1 |')
    expect(markdown).toContain('median TTFT 0.054 s, p90 0.061 s')
    expect(markdown).toContain(
      '| router | median TTFT (s) | p90 TTFT (s) | median e2e (s) | served req/s |',
    )
  })

  it('marks every target met when kinference beats every baseline at every rate by enough', () => {
    // At rates 1 and 5: TTFT 32x and e2e 2x better than round robin at 5, within the SLO
    // up to 5 where round robin is only up to 1, and below least-request at both rates.
    const runs = sharedPrefixRuns([200, 250], [400, 6000], [1, 5])
    const { targets, markdown } = summarizeSuite(runs, [preset('shared-prefix')], new Map(), 1000)
    expect(targetMap(targets)).toEqual({
      'shared-prefix: median TTFT ≥ 20x lower than round robin': { met: true, detail: '32x' },
      'shared-prefix: median e2e ≥ 1.8x lower than round robin': { met: true, detail: '2.00x' },
      'shared-prefix: peak throughput ≥ 5x round robin': { met: true, detail: '5 vs 1' },
      'shared-prefix: median TTFT below every baseline at the top rate': {
        met: true,
        detail: '0.04x of the best baseline; worst over all rates 0.50x',
      },
      'shared-prefix: p90 TTFT below every baseline at the top rate': {
        met: true,
        detail: '0.04x of the best baseline; worst over all rates 0.50x',
      },
    })
    expect(markdown).toContain(
      '- met: shared-prefix: median TTFT below every baseline at the top rate (0.04x of the best baseline; worst over all rates 0.50x)',
    )
    expect(markdown).toContain(
      '| shared-prefix | peak throughput (req/s) | 1x | 7.4x | 1 | 5 | 5.0x |',
    )
    expect(markdown).not.toContain('**missed**')
  })

  it('judges the baselines at the top rate and shows the worst rate beside it', () => {
    // At rate 1 least-request (200 ms) beats kinference (250 ms); at rate 2 kinference wins.
    const { targets, markdown } = summarizeSuite(
      sharedPrefixRuns([250, 250], [200, 6000]),
      [preset('shared-prefix')],
      new Map(),
      1000,
    )
    const byName = targetMap(targets)
    expect(byName['shared-prefix: median TTFT below every baseline at the top rate']).toEqual({
      met: true,
      detail: '0.04x of the best baseline; worst over all rates 1.25x',
    })
    expect(byName['shared-prefix: p90 TTFT below every baseline at the top rate']?.met).toBe(true)
    // The ratios to round robin still pass; the peak does not (2 vs 1).
    expect(byName['shared-prefix: median TTFT ≥ 20x lower than round robin']?.met).toBe(true)
    expect(byName['shared-prefix: peak throughput ≥ 5x round robin']).toEqual({
      met: false,
      detail: '2 vs 1',
    })
    expect(markdown).toContain(
      '- met: shared-prefix: median TTFT below every baseline at the top rate (0.04x of the best baseline; worst over all rates 1.25x)',
    )
  })

  it('calls the peak ratio unmeasured, not met, when round robin is over the SLO at every rate', () => {
    // Round robin at 0.5 s and 8 s against an SLO of 400 ms: never within it.
    const { targets } = summarizeSuite(
      sharedPrefixRuns([250, 250], [6000, 6000], [10, 15]),
      [preset('shared-prefix')],
      new Map(),
      400,
    )
    expect(targetMap(targets)['shared-prefix: peak throughput ≥ 5x round robin']).toEqual({
      met: false,
      detail: 'unmeasured: round robin is over the SLO at every rate (15 vs none)',
    })
  })

  it('marks a tie with the best baseline as missed: below means strictly below', () => {
    const { targets } = summarizeSuite(
      sharedPrefixRuns([250, 250], [6000, 250]),
      [preset('shared-prefix')],
      new Map(),
      1000,
    )
    expect(
      targetMap(targets)['shared-prefix: median TTFT below every baseline at the top rate'],
    ).toEqual({ met: false, detail: '1.00x of the best baseline; worst over all rates 1.00x' })
  })

  it('misses the TTFT and e2e ratio targets when the gain over round robin is too small', () => {
    const runs = [
      run('shared-prefix', 'round-robin', 2, spread(1000), 10_000),
      run('shared-prefix', 'kinference', 2, spread(500), 8_000),
    ]
    const byName = targetMap(
      summarizeSuite(runs, [preset('shared-prefix')], new Map(), 1000).targets,
    )
    expect(byName['shared-prefix: median TTFT ≥ 20x lower than round robin']).toEqual({
      met: false,
      detail: '2.0x',
    })
    expect(byName['shared-prefix: median e2e ≥ 1.8x lower than round robin']).toEqual({
      met: false,
      detail: '1.25x',
    })
  })

  it('checks multi-turn against its ratios, without a peak target, peak in streams', () => {
    const runs = [
      run('multi-turn', 'round-robin', 32, spread(1500), 14_500),
      run('multi-turn', 'kinference', 32, spread(500), 10_000),
    ]
    const { targets, markdown } = summarizeSuite(runs, [preset('multi-turn')], new Map(), 1000)
    expect(targetMap(targets)).toEqual({
      'multi-turn: median TTFT ≥ 2.9x lower than round robin': { met: true, detail: '3.0x' },
      'multi-turn: median e2e ≥ 1.45x lower than round robin': { met: true, detail: '1.45x' },
      'multi-turn: median TTFT below every baseline at the top rate': {
        met: true,
        detail: '0.33x of the best baseline; worst over all rates 0.33x',
      },
      'multi-turn: p90 TTFT below every baseline at the top rate': {
        met: true,
        detail: '0.33x of the best baseline; worst over all rates 0.33x',
      },
    })
    expect(markdown).toContain('| multi-turn | peak throughput (streams) | 1x | 3.5x | 0 | 32 |')
    expect(markdown).toContain('@ concurrent 32')
  })

  it('checks no-prefix against round robin + 3% and the best baseline + 3% at every rate', () => {
    const noPrefix = (kin: [number, number], lr: [number, number]) => [
      run('no-prefix', 'round-robin', 1, spread(1000), 10_000),
      run('no-prefix', 'kinference', 1, spread(kin[0]), 10_000),
      run('no-prefix', 'least-request', 1, spread(lr[0]), 10_000),
      run('no-prefix', 'round-robin', 2, spread(4000), 10_000),
      run('no-prefix', 'kinference', 2, spread(kin[1]), 10_000),
      run('no-prefix', 'least-request', 2, spread(lr[1]), 10_000),
    ]
    const targetsOf = (kin: [number, number], lr: [number, number]) =>
      targetMap(summarizeSuite(noPrefix(kin, lr), [preset('no-prefix')], new Map(), 1000).targets)
    const rr = 'no-prefix: median TTFT within round robin + 3% at every rate'
    const best = 'no-prefix: median TTFT within 3% of the best baseline at every rate'

    // Kinference 2% over round robin at rate 2, least-request no better: both met.
    let byName = targetsOf([1000, 4080], [1000, 4100])
    expect(Object.keys(byName)).toEqual([rr, best])
    expect(byName[rr]).toEqual({ met: true, detail: 'worst 1.020x of round robin' })
    expect(byName[best]).toEqual({ met: true, detail: 'worst 1.020x of the best' })

    // 5% over round robin at rate 1: both missed.
    byName = targetsOf([1050, 4000], [1000, 4000])
    expect(byName[rr]).toEqual({ met: false, detail: 'worst 1.050x of round robin' })
    expect(byName[best]?.met).toBe(false)

    // Equal to round robin, but least-request 10% better at rate 2: only the second missed.
    byName = targetsOf([1000, 4000], [1000, 3600])
    expect(byName[rr]?.met).toBe(true)
    expect(byName[best]).toEqual({ met: false, detail: 'worst 1.111x of the best' })
  })

  it('skips presets without runs, and the side-by-side rows without both routers', () => {
    const runs = [run('shared-prefix', 'round-robin', 1, spread(700), 13_000)]
    const { markdown, targets } = summarizeSuite(
      runs,
      [preset('shared-prefix'), preset('multi-turn')],
      new Map(),
      1000,
    )
    expect(targets).toEqual([])
    expect(markdown).toContain('## shared-prefix')
    expect(markdown).not.toContain('## multi-turn')
    expect(markdown).not.toContain('| shared-prefix | median TTFT')
    expect(markdown).toContain('| round-robin | 0.700 | 1.40 | 13.0 | 0.29 | 1.0x | 1 |')
  })
})
