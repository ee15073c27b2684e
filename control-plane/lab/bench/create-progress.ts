import { z } from 'zod'
import { parseOptions } from '../../../shared/config/parse-options.ts'

/**
 * How often and how wide the progress is drawn, defaults included. A plain object, not
 * strict: it is read out of the whole ProgressOptions.
 */
export const ProgressDrawOptions = z.object({
  everyPercent: z
    .number({ error: 'must be a number >= 1' })
    .min(1, { error: 'must be a number >= 1' })
    .default(10)
    .describe('Plain mode: a line each time another everyPercent % of the requests is done'),
  minRedrawMs: z
    .number({ error: 'must be a number >= 0' })
    .min(0, { error: 'must be a number >= 0' })
    .default(100)
    .describe('TTY mode: redraws at most this often (completion always redraws)'),
  barWidth: z
    .int({ error: 'must be a positive integer' })
    .min(1, { error: 'must be a positive integer' })
    .default(20)
    .describe('Characters of the bar'),
})
export type ProgressDrawOptions = z.infer<typeof ProgressDrawOptions>
export type ProgressDrawOptionsInput = z.input<typeof ProgressDrawOptions>

export interface ProgressOptions extends ProgressDrawOptionsInput {
  workload: string
  router: string
  /** How the load reads in the line, e.g. "poisson@2". */
  rate: string
  /** Requests the run will make. */
  total: number
  /** A terminal: one bar line redrawn in place. Otherwise plain lines. */
  isTTY: boolean
  write: (text: string) => void
  /** Milliseconds, any origin. */
  now: () => number
}

export interface Progress {
  /** `done` requests finished so far. */
  update(done: number): void
  /** Draws the final state (once) and, on a TTY, ends the line. */
  finish(): void
}

/**
 * A progress reporter for one benchmark run, pure apart from the injected write and
 * clock. On a TTY one line is redrawn in place (carriage return, clear line):
 * `workload router rate [#####---------------] 123/600 req  45.6 s`. Elsewhere (logs,
 * CI) a plain line `workload router rate: 120/600 req (20%)  45.6 s` each time another
 * `everyPercent` % is done, and one on completion.
 */
export function createProgress(options: ProgressOptions): Progress {
  const total = Math.max(0, options.total)
  const { everyPercent: every, minRedrawMs, barWidth } = parseProgressDrawOptions(options)
  const started = options.now()
  const head = `${options.workload} ${options.router} ${options.rate}`
  let lastDrawMs = Number.NEGATIVE_INFINITY
  let drawn = -1
  let lastStep = 0
  let current = 0
  let finished = false

  const seconds = () => `${((options.now() - started) / 1000).toFixed(1)} s`
  const fraction = (done: number) => (total > 0 ? Math.min(1, done / total) : 1)

  const drawBar = (done: number) => {
    const filled = Math.round(fraction(done) * barWidth)
    const bar = `${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}`
    options.write(`\r\x1b[2K${head} [${bar}] ${done}/${total} req  ${seconds()}`)
    lastDrawMs = options.now()
    drawn = done
  }
  const drawLine = (done: number) => {
    const percent = Math.floor(fraction(done) * 100)
    options.write(`${head}: ${done}/${total} req (${percent}%)  ${seconds()}\n`)
    drawn = done
  }

  return {
    update(done) {
      if (finished) return
      current = Math.max(current, done)
      if (current === drawn) return
      const complete = current >= total
      if (options.isTTY) {
        if (complete || options.now() - lastDrawMs >= minRedrawMs) drawBar(current)
        return
      }
      const step = Math.floor((fraction(current) * 100) / every)
      if (complete) {
        drawLine(current)
        finished = true
      } else if (step > lastStep) {
        lastStep = step
        drawLine(current)
      }
    },
    finish() {
      if (options.isTTY) {
        if (finished) return
        finished = true
        if (drawn !== current) drawBar(current)
        options.write('\n')
        return
      }
      if (!finished && drawn !== current) drawLine(current)
      finished = true
    },
  }
}

function parseProgressDrawOptions(input: ProgressDrawOptionsInput): ProgressDrawOptions {
  return parseOptions(ProgressDrawOptions, input, 'progress')
}
