import { z } from 'zod'
import { functionOption, parseOptions } from '../../../../shared/config/parse-options.ts'

/** What one run at an offered rate reports. */
export interface CapacityProbe {
  p90TtftMs: number
  /** Share of the run's requests that completed within it. */
  completedFraction: number
  /**
   * The run reached a steady state: no trend in TTFT (median and p90) across its thirds and
   * nearly all of its middle third's arrivals served within it (suite/baseline-stability.ts).
   * A run that is still filling a queue passes p90 and completion for a while and fails them
   * once long enough, so without this a capacity grows with the run's length.
   */
  stable: boolean
  /** Why the run is unstable, in words ("stable" when it is not). */
  why?: string
}

export type RunAtRate = (rate: number) => Promise<CapacityProbe>

const positive = z.number({ error: 'must be a number > 0' }).gt(0, { error: 'must be > 0' })

export const FindCapacityOptions = z
  .object({
    low: positive.describe('A rate expected to pass (halved while it does not)'),
    high: positive.describe('A rate expected to fail (doubled while it does not)'),
    tolerance: positive
      .default(0.02)
      .describe('Stop when the bracket is this narrow, relative to its lower end'),
    maxSteps: z.int().min(1).default(12).describe('Runs at most, bracketing included'),
    maxP90TtftMs: positive.default(2000).describe('A rate passes with p90 TTFT at most this'),
    minCompletedFraction: z
      .number()
      .gt(0)
      .max(1)
      .default(0.98)
      .describe('…and at least this share of its requests completed within the run'),
    ceiling: positive
      .optional()
      .describe(
        'The fluid throughput bound: no rate above it is run or reported (high is lowered to it)',
      ),
    runAt: functionOption<RunAtRate>(),
  })
  .refine((o) => o.low < o.high, { error: 'must be below high', path: ['low'] })
  .refine((o) => o.ceiling === undefined || o.low < o.ceiling, {
    error: 'must be below the ceiling',
    path: ['low'],
  })
export type FindCapacityOptionsInput = Omit<z.input<typeof FindCapacityOptions>, 'runAt'>

export interface CapacityStep extends CapacityProbe {
  rate: number
  passed: boolean
}

export interface CapacityResult {
  /** The highest rate that passed; null when none did. */
  rate: number | null
  /** Every run, in the order it was made. */
  steps: CapacityStep[]
  /**
   * A passing and a failing rate within the tolerance of each other were found, or the
   * ceiling itself passed (nothing above it can be capacity).
   */
  converged: boolean
}

/** What a run must span to show a trend, for `steadyStateRequests`. */
export interface SteadyStateLength {
  /** Requests at least: enough per third for its p90 to mean something. */
  minRequests: number
  /** Seconds of arrivals at least, at the offered rate. */
  minSeconds: number
}

/**
 * 600 requests (200 a third, 20 above each third's p90) and 180 s of arrivals. A rate 2%
 * (the bisection's tolerance) past the service rate adds 0.02 s of queue per second of
 * arrivals: over 180 s the middle of the last third waits 0.02 × (150 − 30) = 2.4 s more
 * than the middle of the first, past the trend allowance (0.5× the first third's TTFT plus
 * 0.25 s, baseline-stability.ts: at most 1.25 s while the first third is within the 2 s
 * SLO). A 600-request run at 10 req/s lasts 60 s: 0.8 s, hidden under that allowance.
 */
export const steadyStateLength: SteadyStateLength = { minRequests: 600, minSeconds: 180 }

/**
 * Requests a capacity run at `rate` makes: the larger of `minRequests` and `minSeconds` of
 * arrivals at the rate, both multiplied by `scale` (a smoke run's fraction of the suite).
 */
export function steadyStateRequests(
  rate: number,
  scale = 1,
  length: SteadyStateLength = steadyStateLength,
): number {
  return Math.ceil(scale * Math.max(length.minRequests, rate * length.minSeconds))
}

/**
 * Capacity: the highest offered rate, never above `ceiling` (the fluid bound), whose run is
 * stable (steady state, no trend: `CapacityProbe.stable`) with p90 TTFT ≤ 2 s and ≥ 98% of
 * requests complete within the run, by bisection over `runAt`. `runAt` decides how long a
 * run is: long enough to show a trend (`steadyStateRequests`). `high` (lowered to the
 * ceiling) is run first and doubled while it passes, up to the ceiling; `low` is then run and halved while it fails; then the bracket (low passed, high
 * failed) is halved until it is within `tolerance` of low or `maxSteps` runs are spent.
 * The result is the highest rate that passed (every pass raises the bracket's lower end).
 * If pass/fail is not monotone in the rate, bisection still ends at a rate that passed
 * with a failing one within the tolerance above it, but that is just one pass→fail edge
 * inside the bracket: a higher rate may pass too. The steps cannot show it (each run lies
 * between the highest pass and the lowest failure so far), so capacity with noisy runs
 * needs repeated runs per rate in `runAt`, e.g. the median over seeds.
 */
export async function findCapacity(
  runAt: RunAtRate,
  options: FindCapacityOptionsInput,
): Promise<CapacityResult> {
  const o = parseOptions(FindCapacityOptions, { ...options, runAt }, 'find capacity')
  const steps: CapacityStep[] = []
  const probe = async (rate: number) => {
    const result = await o.runAt(rate)
    const passed =
      result.stable &&
      result.p90TtftMs <= o.maxP90TtftMs &&
      result.completedFraction >= o.minCompletedFraction
    steps.push({ rate, ...result, passed })
    return passed
  }
  const spent = () => steps.length >= o.maxSteps
  const ceiling = o.ceiling ?? Number.POSITIVE_INFINITY
  let low: number | null = null
  let high: number | null = Math.min(o.high, ceiling)
  while (high !== null && (await probe(high))) {
    low = high
    high = spent() || high >= ceiling ? null : Math.min(high * 2, ceiling)
  }
  const atCeiling = low !== null && low >= ceiling
  for (let rate = o.low; low === null && high !== null && !spent(); rate /= 2) {
    if (await probe(rate)) low = rate
    else high = rate
  }
  while (low !== null && high !== null && high - low > o.tolerance * low && !spent()) {
    const mid = (low + high) / 2
    if (await probe(mid)) low = mid
    else high = mid
  }
  return {
    rate: low,
    steps,
    converged: atCeiling || (low !== null && high !== null && high - low <= o.tolerance * low),
  }
}
