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
    '| scenario | requests | completed | clean errors | lost | convergence | checks |',
    '|---|---:|---:|---:|---:|---|---|',
    ...results.map(row),
    '',
    ...results.flatMap(details),
    reportEnd,
  ]
  return `${lines.join('\n')}\n`
}

function row(result: ScenarioResult): string {
  const { convergence } = result
  const settled =
    convergence === null
      ? '–'
      : `${convergence.what}: ${convergence.ms === null ? 'never' : `${Math.round(convergence.ms)} ms`}${convergence.targetMs === null ? '' : ` (target ≤ ${convergence.targetMs} ms)`}`
  const checks = `${result.checks.filter((check) => check.ok).length}/${result.checks.length}${scenarioPassed(result) ? '' : ' **FAILED**'}`
  return `| ${result.title} | ${result.requests} | ${result.completed} | ${result.cleanErrors} | ${result.lost} | ${settled} | ${checks} |`
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
