import type { Decision, StoredDecisionEntry } from './decision-entry.ts'
import { joinDecisions } from './decision-entry.ts'

export interface DecisionFollower {
  /**
   * Takes log entries in order (from successive reads) and returns the decisions now
   * complete: ended, or without an end `giveUpMs` after they were made (the end was lost).
   */
  push(entries: readonly StoredDecisionEntry[], nowMs: number): Decision[]
  /** Waits for the end of a decision read earlier, whole (a first read of the log). */
  follow(decision: Decision): void
  /** Decisions seen and not yet complete. */
  readonly pending: number
}

/**
 * Joins a decision log read piece by piece (`--follow`, the status page's live table):
 * a decision's end usually arrives in a later read than the decision itself. `opened`
 * sees each kept decision when it is first read without its end (the status page shows
 * requests in flight; `--follow` waits for the end).
 */
export function createDecisionFollower(
  keep: (decision: Decision) => boolean,
  giveUpMs = 10 * 60_000,
  opened: (decision: Decision) => void = () => {},
): DecisionFollower {
  const open = new Map<string, StoredDecisionEntry>()
  const hold = (decision: Decision) => {
    const { id, end: _, ...decided } = decision
    open.set(id, { id, entry: { kind: 'decided', ...decided } })
  }
  return {
    push(entries, nowMs) {
      const done: Decision[] = []
      const decided = [...open.values(), ...entries.filter((e) => e.entry.kind === 'decided')]
      const joined = joinDecisions([...decided, ...entries.filter((e) => e.entry.kind === 'ended')])
      const before = new Set(open.keys())
      open.clear()
      for (const decision of joined) {
        if (!keep(decision)) continue
        if (decision.end !== null || nowMs - decision.atMs > giveUpMs) done.push(decision)
        else {
          hold(decision)
          if (!before.has(decision.id)) opened(decision)
        }
      }
      return done
    },
    follow(decision) {
      if (decision.end === null && keep(decision)) hold(decision)
    },
    get pending() {
      return open.size
    },
  }
}
