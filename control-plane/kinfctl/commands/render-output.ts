import { Document, Scalar, visit } from 'yaml'
import {
  escapeControls,
  escapeControlsInJson,
  hasControls,
} from '../../../shared/state/escape-controls.ts'
import { UsageError } from '../cli-io.ts'

export type OutputFormat = 'table' | 'json' | 'yaml'

export function parseOutputFormat(text: string): OutputFormat {
  if (text === 'table' || text === 'json' || text === 'yaml') return text
  throw new UsageError(`-o must be table, json or yaml, not "${text}"`)
}

/** What a command shows: the data (json, yaml) and, for tables, its rows and a footer. */
export interface Rendered {
  data: unknown
  columns: string[]
  rows: string[][]
  /** Lines under the table (summaries); empty for none. */
  notes: string[]
}

/**
 * The whole text of one rendering, newline-terminated. It goes to a terminal, and what it
 * shows comes from the shared state, where a tenant's request can put text: no control
 * character is printed raw. Table cells and notes show each as `\xHH`; json and yaml
 * escape them in the text (the same values once parsed).
 */
export function renderOutput(rendered: Rendered, format: OutputFormat): string {
  if (format === 'json') return `${escapeControlsInJson(JSON.stringify(rendered.data, null, 2))}\n`
  if (format === 'yaml') return yamlText(rendered.data)
  const table = rendered.rows.length === 0 ? '' : formatTable(rendered.columns, rendered.rows)
  return table + rendered.notes.map((line) => `${escapeControls(line)}\n`).join('')
}

/** Columns padded to their widest cell, kubectl style (two spaces apart); controls escaped. */
export function formatTable(columns: readonly string[], cells: readonly string[][]): string {
  const rows = cells.map((row) => row.map(escapeControls))
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...rows.map((row) => (row[i] ?? '').length)),
  )
  const line = (cells: readonly string[]) =>
    `${cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd()}\n`
  return line(columns) + rows.map(line).join('')
}

/**
 * YAML with every string holding a control character in double quotes, unfolded: yaml
 * escapes C0 there as JSON does (a tab or newline would otherwise go raw in a plain or
 * block scalar), and DEL and C1, which it leaves, are escaped after.
 */
function yamlText(data: unknown): string {
  const document = new Document(data)
  visit(document, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && hasControls(node.value)) node.type = Scalar.QUOTE_DOUBLE
    },
  })
  const text = document.toString({ doubleQuotedMinMultiLineLength: Number.POSITIVE_INFINITY })
  return escapeControlsInJson(text)
}

/** Table cells: a dash for what is unknown. */
export const cell = {
  ms: (value: number | null | undefined) => (value == null ? '-' : `${Math.round(value)}ms`),
  percent: (value: number | null | undefined) =>
    value == null ? '-' : `${(value * 100).toFixed(value < 0.1 ? 1 : 0)}%`,
  count: (value: number | null | undefined) => (value == null ? '-' : String(Math.round(value))),
  age: (atMs: number | null | undefined, nowMs: number) =>
    atMs == null ? '-' : `${Math.max(0, (nowMs - atMs) / 1000).toFixed(1)}s`,
  text: (value: string | null | undefined) => (value == null || value === '' ? '-' : value),
}
