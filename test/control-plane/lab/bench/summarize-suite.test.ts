import { describe, expect, it } from 'vitest'
import {
  type BenchPreset,
  benchPresets,
} from '../../../../control-plane/lab/bench/bench-presets.ts'
import type {
  BenchmarkRun,
  RequestRecord,
} from '../../../../control-plane/lab/bench/request-record.ts'
import {
  type RatePoint,
  ratePoints,
} from '../../../../control-plane/lab/bench/suite/rate-points.ts'
import type { TargetCheck } from '../../../../control-plane/lab/bench/suite/targets/target-verdict.ts'
import {
  matchedRate,
  peakRate,
  summarizeSuite,
  worstAgainstBestPeer,
} from '../../../../control-plane/lab/bench/summarize-suite.ts'

const preset = (name: string): BenchPreset => {
  const found = benchPresets[name]
  if (!found) throw new Error(`no preset ${name}`)
  return found
}

/**
 * A run whose requests have exactly these TTFTs (ms) and each the e2e latency `e2eMs`,
 * sent one e2e apart (at least a second), so the run keeps up with its arrivals; all
 * successful.
 */
function run(
  workload: string,
  router: string,
  rate: number,
  ttftsMs: readonly number[],
  e2eMs: number,
  seed = 42,
): BenchmarkRun {
  const records: RequestRecord[] = ttftsMs.map((ttft, i) => {
    const startMs = i * Math.max(1000, e2eMs)
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
      seed,
      dataSpec: preset(workload).data,
    },
    startMs: 0,
    endMs: Math.max(...records.map((r) => r.endMs)),
    records,
    prefixCache: null,
    elapsedSeconds: 0.01,
  }
}

/** Five requests with TTFT median `ms`, p90 twice that, and no trend across the run. */
const spread = (ms: number) => [ms, ms / 2, 2 * ms, ms, (ms * 3) / 4]

/** A run whose TTFT grows over the run and whose answers come ever later: a queue building. */
function collapsing(workload: string, router: string, rate: number, seed = 42): BenchmarkRun {
  const records: RequestRecord[] = Array.from({ length: 30 }, (_, i) => {
    const startMs = i * 1000
    const ttft = 1000 + i * 3000
    return {
      id: `${router}-${rate}-${i}`,
      conversation: i,
      turn: 0,
      startMs,
      firstTokenMs: startMs + ttft,
      tokenTimesMs: [startMs + ttft, startMs + ttft + 5000],
      endMs: startMs + ttft + 5000,
      promptTokens: 100,
      outputTokens: 10,
      cachedTokens: 0,
      pod: 'sim-pod-0',
      error: null,
    }
  })
  const base = run(workload, router, rate, [1], 1, seed)
  return { ...base, records, endMs: Math.max(...records.map((r) => r.endMs)) }
}

const targetMap = (targets: TargetCheck[]) =>
  Object.fromEntries(targets.map((t) => [t.name, { verdict: t.verdict, detail: t.detail }]))

describe('ratePoints', () => {
  it('gives each workload and router its points in ascending rate, TTFT in seconds', () => {
    const points = ratePoints([
      run('shared-prefix', 'round-robin', 4, spread(8000), 20_000),
      run('shared-prefix', 'kinference', 4, spread(300), 10_000),
      run('shared-prefix', 'round-robin', 1, spread(400), 12_000),
      run('no-prefix', 'round-robin', 2, spread(900), 15_000),
    ])
    expect([...points.keys()]).toEqual(['shared-prefix', 'no-prefix'])
    expect([...(points.get('shared-prefix')?.keys() ?? [])]).toEqual(['round-robin', 'kinference'])
    const rr = points.get('shared-prefix')?.get('round-robin') ?? []
    expect(rr.map((p) => p.rate)).toEqual([1, 4])
    expect(rr[1]?.ttftMedianS).toEqual({ mean: 8, min: 8, max: 8 })
    expect(rr[1]?.ttftP90S.mean).toBe(16)
    expect(rr[1]?.e2eMedianS.mean).toBe(20)
    expect(rr[1]?.stability.stable).toBe(true)
  })

  it('averages a rate over its seeds and keeps the spread', () => {
    const points = ratePoints([
      run('shared-prefix', 'kinference', 4, spread(200), 2000, 1),
      run('shared-prefix', 'kinference', 4, spread(400), 2000, 2),
      run('shared-prefix', 'kinference', 4, spread(300), 2000, 42),
    ])
    const [point] = points.get('shared-prefix')?.get('kinference') ?? []
    expect(point?.seeds).toEqual([1, 2, 42])
    expect(point?.ttftMedianS.mean).toBeCloseTo(0.3, 12)
    expect(point?.ttftMedianS.min).toBe(0.2)
    expect(point?.ttftMedianS.max).toBe(0.4)
  })

  it('leaves failed requests out of the TTFT median', () => {
    const r = run('no-prefix', 'round-robin', 1, [100, 200, 300], 1000)
    const failed = r.records[0] as RequestRecord
    r.records[0] = { ...failed, firstTokenMs: null, tokenTimesMs: [], error: 'boom' }
    // Successful: 200 and 300; the inverted-CDF median of two values is the lower one.
    expect(ratePoints([r]).get('no-prefix')?.get('round-robin')?.[0]?.ttftMedianS.mean).toBe(0.2)
  })

  it('calls a point unstable when any seed was, and names the seed', () => {
    const points = ratePoints([
      run('shared-prefix', 'round-robin', 8, spread(300), 2000, 1),
      collapsing('shared-prefix', 'round-robin', 8, 2),
    ])
    const [point] = points.get('shared-prefix')?.get('round-robin') ?? []
    expect(point?.stability.stable).toBe(false)
    expect(point?.stability.seedsUnstable).toEqual([2])
    expect(point?.stability.why).toContain('(seed 2)')
  })
})

const point = (rate: number, ttftMedianS: number): RatePoint => {
  const v = (x: number) => ({ mean: x, min: x, max: x })
  return {
    rate,
    seeds: [42],
    ttftMedianS: v(ttftMedianS),
    ttftP90S: v(ttftMedianS),
    e2eMedianS: v(1),
    achievedRps: v(rate),
    hitRate: v(0),
    stability: {
      servedFraction: 1,
      thirdsTtftS: [ttftMedianS, ttftMedianS, ttftMedianS],
      stable: true,
      why: 'stable',
      seedsUnstable: [],
    },
  }
}

describe('peakRate and matchedRate', () => {
  it('peak is the highest rate whose median TTFT is within the SLO, the SLO itself included', () => {
    const points = [point(1, 0.2), point(2, 0.9), point(3, 1), point(4, 1.001), point(6, 7)]
    expect(peakRate(points, 1000)).toBe(3)
    expect(peakRate(points, 900)).toBe(2)
    expect(peakRate([point(1, 2)], 1000)).toBe(0)
    expect(peakRate([], 1000)).toBe(0)
  })

  it('matches the rate whose median is closest as a ratio, the lower rate on a tie', () => {
    const points = [point(3, 0.4), point(4, 7.5), point(6, 46)]
    expect(matchedRate(points, 6.88)?.rate).toBe(4)
    expect(matchedRate(points, 1)?.rate).toBe(3)
    expect(matchedRate([point(1, 2), point(2, 8)], 4)?.rate).toBe(1)
    expect(matchedRate([], 4)).toBeUndefined()
  })
})

describe('worstAgainstBestPeer', () => {
  it('is the largest ratio of ours to the best peer at a rate, and where', () => {
    const byRouter = new Map([
      ['round-robin', [point(1, 1), point(2, 4)]],
      ['least-request', [point(1, 0.9), point(2, 4.2)]],
      ['kinference', [point(1, 0.95), point(2, 3.9)]],
    ])
    const worst = worstAgainstBestPeer(byRouter)
    expect(worst.rate).toBe(1)
    expect(worst.ratio).toBeCloseTo(0.95 / 0.9, 12)
    expect(worstAgainstBestPeer(new Map([['kinference', [point(1, 1)]]])).rate).toBeNull()
  })
})

/** Shared-prefix: round robin at 0.5 s, ~7 s and collapsing; kinference at the given medians. */
function sharedPrefixRuns(kinferenceMs: [number, number, number], collapse = true) {
  return [
    run('shared-prefix', 'round-robin', 2, spread(500), 3000),
    run('shared-prefix', 'kinference', 2, spread(kinferenceMs[0]), 2000),
    run('shared-prefix', 'round-robin', 4, spread(7000), 12_000),
    run('shared-prefix', 'kinference', 4, spread(kinferenceMs[1]), 6000),
    collapse
      ? collapsing('shared-prefix', 'round-robin', 8)
      : run('shared-prefix', 'round-robin', 8, spread(40_000), 60_000),
    run('shared-prefix', 'kinference', 8, spread(kinferenceMs[2]), 6000),
  ]
}

describe('summarizeSuite', () => {
  it('prints the target table where round robin is closest to the target and at the top rate', () => {
    const { markdown } = summarizeSuite(
      sharedPrefixRuns([200, 250, 300]),
      [preset('shared-prefix')],
      new Map(),
      1000,
    )
    const lines = markdown.split('\n')
    expect(lines).toContain(
      '| shared-prefix | poisson 4 (closest to the target) | median TTFT (s) | 6.88 | 0.310 | 7.00 | 0.250 | 28x | stable |',
    )
    expect(lines).toContain(
      '| shared-prefix | poisson 4 (closest to the target) | median e2e (s) | 20.5 | 11.3 | 12.0 | 6.00 | 2.0x | |',
    )
    // At the top rate round robin never catches up: no ratio against it.
    const top = lines.find((l) =>
      l.startsWith('| shared-prefix | poisson 8 (top rate) | median TTFT'),
    )
    expect(top).toContain('| baseline unstable |')
    expect(top).toContain('TTFT trending')
    expect(markdown).toContain('seed 42')
    expect(markdown).toContain('3 pods of l40s-27b-fp8')
  })

  it('has a per-rate table with every rate and router, and the bounds line', () => {
    const { markdown } = summarizeSuite(
      sharedPrefixRuns([200, 250, 300]),
      [preset('shared-prefix')],
      new Map([
        [
          'shared-prefix',
          {
            floor: { medianMs: 54, p90Ms: 61, requests: 600 },
            infiniteHitCeiling: 0.9,
            capacityHitCeiling: 0.8,
            fluidRps: 7.5,
          },
        ],
      ]),
      1000,
    )
    expect(markdown).toContain(
      'Bounds: zero-queue floor median TTFT 0.054 s, p90 0.061 s; infinite-cache hit ceiling 90.0%; capacity-constrained hit ceiling 80.0%; fluid throughput bound 7.50 req/s.',
    )
    const rows = markdown.split('\n').filter((l) => /^\| [248] \| /.test(l))
    expect(rows).toHaveLength(6)
    expect(rows).toContain('| 4 | kinference | 0.250 | 0.500 | 6.00 | 0.17 | 0.0% (0.0%) | 28x |')
    expect(rows.find((r) => r.startsWith('| 4 | round-robin'))).toContain('| stable |')
    expect(rows.find((r) => r.startsWith('| 8 | kinference'))).toContain('| baseline unstable |')
  })

  it('checks the target ratios at the matched rate, with round robin’s stability', () => {
    let byName = targetMap(
      summarizeSuite(sharedPrefixRuns([200, 250, 300]), [preset('shared-prefix')], new Map(), 1000)
        .targets,
    )
    const ttft =
      "shared-prefix: median TTFT ≥ 22x lower than round robin where its median TTFT is closest to the target's 6.88 s"
    const e2e =
      "shared-prefix: median e2e ≥ 1.8x lower than round robin where its median TTFT is closest to the target's 6.88 s"
    expect(byName[ttft]).toEqual({
      verdict: 'met',
      detail: '28x at req/s 4, round robin 7.00 s, stable',
    })
    expect(byName[e2e]?.verdict).toBe('met')
    // 7 s / 0.5 s = 14x: not met.
    byName = targetMap(
      summarizeSuite(sharedPrefixRuns([200, 500, 300]), [preset('shared-prefix')], new Map(), 1000)
        .targets,
    )
    expect(byName[ttft]).toEqual({
      verdict: 'not met',
      detail: '14x at req/s 4, round robin 7.00 s, stable',
    })
  })

  it('does not judge a ratio against an unstable baseline, and gives the ratio where it is stable', () => {
    // Round robin collapses at 4 req/s (its median TTFT, 43 s, is the closest to 6.88 s)
    // and is stable at 2; kinference is 430x better at 4, which would be "met".
    const runs = [
      run('shared-prefix', 'round-robin', 2, spread(1000), 2000),
      run('shared-prefix', 'kinference', 2, spread(250), 1000),
      collapsing('shared-prefix', 'round-robin', 4),
      run('shared-prefix', 'kinference', 4, spread(100), 2000),
    ]
    const { targets, markdown } = summarizeSuite(runs, [preset('shared-prefix')], new Map(), 1000)
    const [ttft, e2e] = targets
    expect(ttft?.verdict).toBe('baseline unstable')
    expect(e2e?.verdict).toBe('baseline unstable')
    expect(ttft?.detail).toMatch(
      /^430x at req\/s 4, round robin 43\.0 s, baseline unstable: .*TTFT trending 14\.5 → 44\.5 → 74\.5 s; at req\/s 2, the highest rate where round robin is stable: 4\.00x, round robin 1\.00 s$/,
    )
    expect(markdown).toContain(
      "- not judged (baseline unstable): shared-prefix: median TTFT ≥ 22x lower than round robin where its median TTFT is closest to the target's 6.88 s (430x",
    )
    expect(markdown).toContain('2 targets, 0 met, 0 not met, 2 not judged (baseline unstable)')
    // The table shows the gain where round robin is last stable, labelled, beside the matched rate.
    const lines = markdown.split('\n')
    expect(
      lines.find((l) => l.includes('poisson 4 (closest to the target) | median TTFT')),
    ).toContain('| baseline unstable |')
    expect(lines).toContain(
      '| shared-prefix | poisson 2 (highest rate where round robin is stable) | median TTFT (s) | 6.88 | 0.310 | 1.00 | 0.250 | 4.0x | stable |',
    )
    // Without a stable rate, it says so.
    const [alone] = summarizeSuite(
      runs.slice(2),
      [preset('shared-prefix')],
      new Map(),
      1000,
    ).targets
    expect(alone?.verdict).toBe('baseline unstable')
    expect(alone?.detail).toMatch(/; round robin is stable at no rate run$/)
  })

  it('checks multi-turn’s TTFT ratio in streams, and no-prefix within 1% of the best peer', () => {
    const multi = summarizeSuite(
      [
        run('multi-turn', 'round-robin', 80, spread(1700), 14_000),
        run('multi-turn', 'kinference', 80, spread(500), 10_000),
      ],
      [preset('multi-turn')],
      new Map(),
      1000,
    )
    expect(multi.targets.map((t) => [t.verdict, t.detail])).toEqual([
      ['met', '3.40x at streams 80, round robin 1.70 s, stable'],
    ])
    const noPrefix = (kin: number) =>
      summarizeSuite(
        [
          run('no-prefix', 'round-robin', 1, spread(1000), 3000),
          run('no-prefix', 'least-request', 1, spread(900), 3000),
          run('no-prefix', 'kinference', 1, spread(kin), 3000),
        ],
        [preset('no-prefix')],
        new Map(),
        1000,
      ).targets
    expect(noPrefix(905).map((t) => t.verdict)).toEqual(['met'])
    expect(noPrefix(950)[0]).toMatchObject({
      verdict: 'not met',
      detail: 'worst 1.056x of the best peer, at 1',
    })
  })

  it('skips presets without runs, and the target rows without both routers', () => {
    const { markdown, targets } = summarizeSuite(
      [run('shared-prefix', 'round-robin', 1, spread(700), 13_000)],
      [preset('shared-prefix'), preset('multi-turn')],
      new Map(),
      1000,
    )
    expect(targets).toEqual([])
    expect(markdown).toContain('## shared-prefix')
    expect(markdown).not.toContain('## multi-turn')
    expect(markdown).not.toContain('| shared-prefix | poisson')
    expect(markdown).toContain('| 1 | round-robin | 0.700 | 1.40 | 13.0 |')
  })
})
