import { z } from 'zod'
import { functionOption, parseOptions } from '../../../../shared/config/parse-options.ts'

/** What one run at an offered rate reports. */
export interface CapacityProbe {
  p90TtftMs: number
  /** Share of the run's requests that completed within it. */
  completedFraction: number
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
    runAt: functionOption<RunAtRate>(),
  })
  .refine((o) => o.low < o.high, { error: 'must be below high', path: ['low'] })
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
  /** A passing and a failing rate within the tolerance of each other were found. */
  converged: boolean
}

/**
 * The highest offered rate at which p90 TTFT ≤ 2 s and ≥ 98% of requests complete
 * within the run, by bisection over `runAt`. `high` is run first and doubled while it
 * passes; `low` is then run and halved while it fails; then the bracket (low passed, high
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
      result.p90TtftMs <= o.maxP90TtftMs && result.completedFraction >= o.minCompletedFraction
    steps.push({ rate, ...result, passed })
    return passed
  }
  const spent = () => steps.length >= o.maxSteps
  let low: number | null = null
  let high: number | null = o.high
  while (high !== null && (await probe(high))) {
    low = high
    high = spent() ? null : high * 2
  }
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
    converged: low !== null && high !== null && high - low <= o.tolerance * low,
  }
}
