import { describe, expect, it } from 'vitest'
import { computeBenchmarkMetrics } from '../../../../../control-plane/lab/bench/compute-benchmark-metrics.ts'
import { baselineStability } from '../../../../../control-plane/lab/bench/suite/baseline-stability.ts'
import { ratePoints } from '../../../../../control-plane/lab/bench/suite/rate-points.ts'
import { renderRateTable } from '../../../../../control-plane/lab/bench/suite/rate-table.ts'
import { timedBenchRun } from '../../../../support/timed-bench-run.ts'

/** `count` requests `gapMs` apart, each with TTFT `ttft(i)` and done `e2e(i)` after it started. */
const runOf = (
  profile: string,
  count: number,
  gapMs: number,
  ttft: (i: number) => number,
  e2e: (i: number) => number,
) => timedBenchRun({ profile, count, gapMs, ttftMs: ttft, e2eMs: e2e })

describe('baselineStability', () => {
  it('a run that keeps up with its arrivals and has no trend is stable', () => {
    const stability = baselineStability(
      runOf(
        'poisson@1',
        90,
        1000,
        () => 300,
        () => 2000,
      ),
    )
    expect(stability.stable).toBe(true)
    expect(stability.servedFraction).toBeCloseTo(1, 1)
    expect(stability.thirdsTtftS).toEqual([0.3, 0.3, 0.3])
    expect(stability.why).toBe('stable')
  })

  it('a run whose answers fall behind is unstable even with a flat TTFT', () => {
    // Each answer takes 0.5 s longer than the one before: finishing at half the arrival rate.
    const stability = baselineStability(
      runOf(
        'poisson@1',
        90,
        1000,
        () => 300,
        (i) => 1000 + i * 1000,
      ),
    )
    expect(stability.stable).toBe(false)
    expect(stability.servedFraction).toBeLessThan(0.95)
    expect(stability.why).toMatch(
      /^served \d+% of offered in the measured window \(the middle third of the arrivals: \d+\.\d\d of \d+\.\d\d req\/s\)$/,
    )
  })

  it('says what the served fraction is of, with the window’s rates whose ratio it is', () => {
    // 90 arrivals 1 s apart, every answer at 91 s: nothing finishes while they arrive, yet
    // the run (drain included) served nearly 1 req/s. Once "served 0% of offered" beside it.
    const run = runOf(
      'poisson@1',
      90,
      1000,
      () => 300,
      (i) => 91_000 - i * 1000,
    )
    const served = computeBenchmarkMetrics(run).requests_per_second.successful.mean
    expect(served).toBeGreaterThan(0.9)
    const stability = baselineStability(run)
    expect(stability.servedFraction).toBe(0)
    expect(stability.why).toBe(
      // 30 arrivals (at 30 s to 59 s) in the window from 29.7 s to 59.3 s.
      'served 0% of offered in the measured window (the middle third of the arrivals: 0.00 of 1.01 req/s)',
    )
    // The rate table puts both side by side, each saying what it covers.
    const byRouter = ratePoints([run]).get('w') ?? new Map()
    const table = renderRateTable(byRouter, 'req/s', undefined)
    expect(table[0]).toContain('| served req/s (whole run) |')
    expect(table[2]).toContain(`| ${served.toFixed(2)} |`)
    expect(table[2]).toContain('served 0% of offered in the measured window')
  })

  it('a falling-behind run: the percentage is the ratio of the two rates it prints', () => {
    const stability = baselineStability(
      runOf(
        'poisson@1',
        90,
        1000,
        () => 300,
        (i) => 1000 + i * 1000,
      ),
    )
    const [, percent, finished, arrived] =
      /^served (\d+)% .*: (\d+\.\d\d) of (\d+\.\d\d) req\/s\)$/.exec(stability.why) ?? []
    expect(Number(percent)).toBe(Math.round(((stability.servedFraction ?? 0) as number) * 100))
    expect(Number(finished) / Number(arrived)).toBeCloseTo(stability.servedFraction ?? -1, 1)
  })

  it('a TTFT rising across the run is a trend; a falling one (caches warming) is not', () => {
    const rising = baselineStability(
      runOf(
        'concurrent@8',
        90,
        1000,
        (i) => 100 * i,
        () => 9000,
      ),
    )
    expect(rising.stable).toBe(false)
    expect(rising.servedFraction).toBeNull()
    expect(rising.why).toMatch(/^TTFT trending /)
    const falling = baselineStability(
      runOf(
        'concurrent@8',
        90,
        1000,
        (i) => 9000 - 100 * i,
        () => 9000,
      ),
    )
    expect(falling.stable).toBe(true)
  })

  it('a tail growing across the run is a trend even while the median stays flat', () => {
    // One request in five of the last third waits 5 s: its p90 rises, its median does not.
    const slow = (i: number) => (i >= 60 && i % 5 === 0 ? 5000 : 300)
    const tail = baselineStability(runOf('poisson@1', 90, 1000, slow, (i) => slow(i) + 1000))
    expect(tail.thirdsTtftS).toEqual([0.3, 0.3, 0.3])
    expect(tail.stable).toBe(false)
    expect(tail.why).toBe('p90 TTFT trending 0.30 → 0.30 → 5.00 s')
  })

  it('tolerates noise within the slack', () => {
    const noisy = baselineStability(
      runOf(
        'poisson@1',
        90,
        1000,
        (i) => (i % 2 === 0 ? 200 : 400) + (i > 60 ? 150 : 0),
        () => 2000,
      ),
    )
    expect(noisy.stable).toBe(true)
  })
})
