/**
 * Every numeric entity the detectors claim (card, SSN, IPv4, phone) is at least seven
 * characters of digits and the separators " ()./-", starting with a digit, "+" or "(" and
 * ending with a digit. One scan finds those runs; each detector then looks only inside
 * them. A single regex without a leading lookbehind lets V8 skip prose quickly, and since
 * the run class includes digits a run is matched once, from its start: linear time.
 */
const run = /[+(]?\d[\d ()./-]{5,}\d/g

export interface NumericRun {
  start: number
  end: number
}

export function numericRuns(text: string): NumericRun[] {
  const runs: NumericRun[] = []
  run.lastIndex = 0
  for (let match = run.exec(text); match !== null; match = run.exec(text)) {
    runs.push({ start: match.index, end: match.index + match[0].length })
  }
  return runs
}

/**
 * Calls `found` for each match of `pattern` (global, with its own lookbehind and
 * lookahead) in one run, given a character of context before and two after so those
 * assertions see the real neighbours. Runs shorter than `minLength` are skipped unread.
 */
export function forEachMatchInRuns(
  text: string,
  runs: readonly NumericRun[],
  minLength: number,
  pattern: RegExp,
  found: (match: RegExpExecArray, start: number, end: number) => void,
): void {
  for (const run of runs) {
    if (run.end - run.start < minLength) continue
    const from = run.start > 0 ? run.start - 1 : 0
    const window = text.slice(from, run.end + 2)
    pattern.lastIndex = 0
    for (let match = pattern.exec(window); match !== null; match = pattern.exec(window)) {
      found(match, from + match.index, from + match.index + match[0].length)
    }
  }
}
