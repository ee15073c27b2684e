/**
 * The parser's JSON has no positions, so lines are recovered from the source text: a
 * block by its header (`resource "aws_x" "y" {`), an argument by the first line inside
 * that block that starts with its name, a reference by the first line that mentions it.
 * A heredoc or string that looks like a header can mislead it; then the line is the
 * nearest plausible one, never a guess outside the file.
 */
export interface SourceLocator {
  /** Line of the nth (from 0) `kind "label" ... {`, or 1 when it cannot be found. */
  blockLine(kind: string, labels: readonly string[], nth?: number): number
  /** Line of `name =`, `name {` or `dynamic "name"` inside the block starting at `fromLine` (also in an inline object). */
  keyLine(fromLine: number, name: string): number
  /** First line from `fallback` on (else anywhere) mentioning `text` as a whole token, or `fallback`. */
  textLine(text: string, fallback: number): number
  /** First line assigning `name =` (a local), or `fallback`. */
  assignmentLine(name: string, fallback: number): number
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export function createSourceLocator(source: string): SourceLocator {
  const lines = source.split('\n')
  const find = (pattern: RegExp, from = 0, to = lines.length): number => {
    for (let i = from; i < to; i++) if (pattern.test(lines[i] ?? '')) return i + 1
    return 0
  }
  return {
    blockLine(kind, labels, nth = 0) {
      const quoted = labels.map((label) => `\\s+"?${escapeRegExp(label)}"?`).join('')
      const header = new RegExp(`^\\s*${escapeRegExp(kind)}${quoted}\\s*\\{`)
      let line = 0
      for (let i = 0; i <= nth; i++) line = find(header, line) || line
      return line || 1
    },
    keyLine(fromLine, name) {
      const end = blockEnd(lines, fromLine - 1)
      const escaped = escapeRegExp(name)
      // At the start of a line, or inside an inline object: `{ type = "x", name = "y" }`.
      const key = new RegExp(`(?:^|[{,])\\s*(?:${escaped}\\s*[={]|dynamic\\s+"${escaped}")`)
      return find(key, fromLine, end) || fromLine
    },
    textLine(text, fallback) {
      const token = new RegExp(`(^|[^\\w.])${escapeRegExp(text)}(?![\\w-])`)
      return find(token, Math.max(fallback - 1, 0)) || find(token) || fallback
    },
    assignmentLine(name, fallback) {
      return find(new RegExp(`^\\s*${escapeRegExp(name)}\\s*=`)) || fallback
    },
  }
}

/** Index just past the line closing the block opened on line `start` (braces, outside strings). */
function blockEnd(lines: readonly string[], start: number): number {
  let depth = 0
  for (let i = start; i < lines.length; i++) {
    for (const brace of (lines[i] ?? '').replace(/"(?:[^"\\]|\\.)*"/g, '').matchAll(/[{}]/g)) {
      depth += brace[0] === '{' ? 1 : -1
    }
    if (depth <= 0 && i > start) return i + 1
  }
  return lines.length
}
