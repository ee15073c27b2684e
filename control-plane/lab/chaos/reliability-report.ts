import { type ScenarioResult, scenarioPassed } from './scenario-result.ts'

export const reportBegin = '<!-- chaos results: written by npm run chaos, do not edit by hand -->'
export const reportEnd = '<!-- end of chaos results -->'

/** The results as docs/reliability.md shows them: a table, then each scenario's details. */
export function renderReliabilityTable(
  results: readonly ScenarioResult[],
  header: { size: string; seed: number; date: string; machine: string },
): string {
  const lines = [
    reportBegin,
    '',
    `Run: \`${header.size}\` version, seed ${header.seed}, ${header.date}, ${header.machine}.`,
    '',
    ...alignedTable(
      ['scenario', 'requests', 'completed', 'clean errors', 'lost', 'convergence', 'checks'],
      [false, true, true, true, true, false, false],
      results.map(row),
    ),
    '',
    ...results.flatMap(details),
    reportEnd,
  ]
  return `${lines.join('\n')}\n`
}

function row(result: ScenarioResult): string[] {
  const { convergence } = result
  const settled =
    convergence === null
      ? '–'
      : `${convergence.what}: ${convergence.ms === null ? 'never' : `${Math.round(convergence.ms)} ms`}${convergence.targetMs === null ? '' : ` (target ≤ ${convergence.targetMs} ms)`}`
  const checks = `${result.checks.filter((check) => check.ok).length}/${result.checks.length}${scenarioPassed(result) ? '' : ' **FAILED**'}`
  const counts = [result.requests, result.completed, result.cleanErrors, result.lost]
  return [result.title, ...counts.map(String), settled, checks]
}

/** A Markdown table with its columns padded, as the formatter (biome) lays them out. */
function alignedTable(header: string[], right: boolean[], rows: string[][]): string[] {
  const width = (text: string) => [...text].length
  const widths = header.map((title, i) =>
    Math.max(3, width(title), ...rows.map((cells) => width(cells[i] ?? ''))),
  )
  const pad = (text: string, i: number) => {
    const fill = ' '.repeat((widths[i] ?? 0) - width(text))
    return right[i] ? fill + text : text + fill
  }
  const line = (cells: string[]) => `| ${cells.map(pad).join(' | ')} |`
  const rule = widths.map((w, i) => (right[i] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)))
  return [line(header), `| ${rule.join(' | ')} |`, ...rows.map(line)]
}

function details(result: ScenarioResult): string[] {
  return [
    `**${result.title}** (\`${result.id}\`, ${(result.durationMs / 1000).toFixed(1)} s)`,
    '',
    ...result.checks.map((check) => `- ${check.ok ? '✓' : '✗'} ${check.name}: ${check.detail}`),
    ...(result.errorKinds.length > 0 ? [`- clean errors: ${result.errorKinds.join(', ')}`] : []),
    ...(result.lostWhy.length > 0 ? [`- lost: ${result.lostWhy.join('; ')}`] : []),
    ...result.notes.map((note) => `- ${note}`),
    '',
  ]
}

/** The document with its results section replaced (or appended when it has none). */
export function replaceReliabilityTable(document: string, table: string): string {
  const begin = document.indexOf(reportBegin)
  const end = document.indexOf(reportEnd)
  if (begin < 0 || end < begin) return `${document.trimEnd()}\n\n${table}`
  return document.slice(0, begin) + table + document.slice(end + reportEnd.length + 1)
}
