import type { Decision } from '../../../shared/state/decision-entry.ts'
import { createDecisionFollower } from '../../../shared/state/decision-follower.ts'
import { summarizeDecisions } from '../../../shared/state/decision-summary.ts'
import { escapeControls, escapeControlsInJson } from '../../../shared/state/escape-controls.ts'
import { type DecisionsReport, poolMatches } from '../../state/state-reader.ts'
import type { CliIo } from '../cli-io.ts'
import type { InspectSession } from './inspect-session.ts'
import { decisionColumns, decisionRow, summaryLine } from './inspect-views.ts'
import type { OutputFormat } from './render-output.ts'

export interface FollowOptions {
  session: InspectSession
  format: OutputFormat
  intervalMs: number
  io: CliIo
  /** The log so far, shown first. */
  report: DecisionsReport
  filter: { tenant?: string; pool?: string }
  /**
   * --since's bound (wall ms): every read keeps to it, not only the first. Until the log has
   * an entry in the window there is no id to follow from, and a read without the bound
   * would return the whole log.
   */
  sinceMs?: number
}

/**
 * `inspect decisions --follow`: the log so far, then each new decision once it has ended
 * (so with its actual TTFT), until interrupted; then the summary of everything shown.
 * Table rows keep fixed widths; json is one decision per line, yaml one per document.
 */
export async function followDecisions(options: FollowOptions): Promise<void> {
  const { io, format, filter } = options
  // Wide enough for a UUID request id, a policy/rule and the usual names.
  const widths = [12, 36, 10, 28, 16, 16, 12, 10, 11, 9, 8, 7, 7, 9]
  const shown: Decision[] = []
  const show = (d: Decision) => {
    shown.push(d)
    // As renderOutput: nothing from the log reaches the terminal as a raw control character.
    if (format === 'json') io.stdout(`${escapeControlsInJson(JSON.stringify(d))}\n`)
    else if (format === 'yaml') io.stdout(`---\n${escapeControlsInJson(JSON.stringify(d))}\n`)
    else io.stdout(fixedRow(decisionRow(d), widths))
  }
  if (format === 'table') io.stdout(fixedRow(decisionColumns(), widths))
  const follower = createDecisionFollower(
    (d) =>
      (filter.tenant === undefined || d.tenant === filter.tenant) &&
      poolMatches(d.pool, filter.pool),
  )
  // Decisions still in flight are followed until they end, like new ones.
  for (const d of options.report.decisions)
    if (d.end !== null) show(d)
    else follower.follow(d)
  let lastId = options.report.lastId
  const interrupted = io.untilInterrupted().then(() => 'stop' as const)
  for (;;) {
    const tick = new Promise<'tick'>((resolve) => setTimeout(resolve, options.intervalMs, 'tick'))
    if ((await Promise.race([tick, interrupted])) === 'stop') break
    const read = await options.session.reader.entries({
      ...(options.sinceMs === undefined ? {} : { sinceMs: options.sinceMs }),
      ...(lastId === null ? {} : { afterId: lastId }),
    })
    lastId = read.lastId
    for (const d of follower.push(read.entries, Date.now())) show(d)
  }
  if (format === 'table') io.stdout(`${summaryLine(summarizeDecisions(shown))}\n`)
}

function fixedRow(cells: readonly string[], widths: readonly number[]): string {
  return `${cells
    .map((c, i) => escapeControls(c).padEnd(widths[i] ?? 0))
    .join('  ')
    .trimEnd()}\n`
}
