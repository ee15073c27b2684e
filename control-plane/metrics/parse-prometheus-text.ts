import type {
  PrometheusMetricType,
  PrometheusParseIssue,
  PrometheusParseResult,
  PrometheusSample,
} from './prometheus-sample.ts'

export interface ParsePrometheusTextOptions {
  /** Characters of the body that are read; a longer body is parsed up to its last whole line. */
  maxBodyLength?: number
  /** Longer lines are reported and skipped without being looked into. */
  maxLineLength?: number
  maxLabelsPerSample?: number
  /** The parse stops, truncated, once this many samples are read. */
  maxSamples?: number
  /** Issues kept in `errors`; `errorCount` counts them all. */
  maxErrors?: number
}

const defaults: Required<ParsePrometheusTextOptions> = {
  maxBodyLength: 4 * 1024 * 1024,
  maxLineLength: 64 * 1024,
  maxLabelsPerSample: 64,
  maxSamples: 100_000,
  maxErrors: 100,
}

const metricTypes = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

/**
 * Parses the Prometheus text format 0.0.4 the way Prometheus' own text parser reads it:
 * `# HELP` / `# TYPE` lines (types kept, a second TYPE for a family is an error), other
 * comments and blank lines skipped, label values unescaped (`\\`, `\"`, `\n`; any other
 * escape is an error), values as Go's ParseFloat reads them (`NaN`, `+Inf`, `-Inf`,
 * decimal and exponent forms), an optional integer timestamp in milliseconds. A bad line
 * becomes an issue with its line number and the parse goes on; nothing throws.
 *
 * Work is bounded for hostile bodies: at most `maxBodyLength` characters are read, a line
 * longer than `maxLineLength` is skipped unread, a sample with more than
 * `maxLabelsPerSample` labels is rejected, and the parse stops at `maxSamples`; each of
 * these is reported. Every step is linear in the characters it reads.
 */
export function parsePrometheusText(
  body: string,
  options: ParsePrometheusTextOptions = {},
): PrometheusParseResult {
  const limits = { ...defaults, ...options }
  const samples: PrometheusSample[] = []
  const types = new Map<string, PrometheusMetricType>()
  const errors: PrometheusParseIssue[] = []
  let errorCount = 0
  const report = (line: number, message: string) => {
    errorCount += 1
    if (errors.length < limits.maxErrors) errors.push({ line, message })
  }

  let end = body.length
  const overlong = end > limits.maxBodyLength
  if (overlong) end = body.lastIndexOf('\n', limits.maxBodyLength - 1) + 1
  let truncated = overlong
  let position = 0
  let line = 0
  while (position < end) {
    const newline = body.indexOf('\n', position)
    const next = newline === -1 || newline >= end ? end : newline
    line += 1
    const lineEnd = next > position && body.charCodeAt(next - 1) === 13 ? next - 1 : next
    if (lineEnd - position > limits.maxLineLength) {
      report(line, `line longer than ${limits.maxLineLength} characters: skipped`)
    } else {
      const outcome = parseLine(body, position, lineEnd, limits.maxLabelsPerSample)
      if (typeof outcome === 'string') report(line, outcome)
      else if (outcome?.kind === 'sample') samples.push(outcome.sample)
      else if (outcome?.kind === 'type') {
        if (types.has(outcome.name)) report(line, `second TYPE line for "${outcome.name}"`)
        else types.set(outcome.name, outcome.type)
      }
    }
    position = next + 1
    if (samples.length >= limits.maxSamples && position < end) {
      truncated = true
      report(line + 1, `more than ${limits.maxSamples} samples: the rest is not read`)
      break
    }
  }
  if (overlong && samples.length < limits.maxSamples) {
    report(line + 1, `body longer than ${limits.maxBodyLength} characters: the rest is not read`)
  }
  return { samples, types, errors, errorCount, truncated }
}

type LineOutcome =
  | { kind: 'sample'; sample: PrometheusSample }
  | { kind: 'type'; name: string; type: PrometheusMetricType }
  | undefined
  | string

const TAB = 9
const SPACE = 32
const QUOTE = 34
const HASH = 35
const COMMA = 44
const EQUALS = 61
const BACKSLASH = 92
const OPEN_BRACE = 123
const CLOSE_BRACE = 125

function parseLine(text: string, start: number, end: number, maxLabels: number): LineOutcome {
  const first = skipBlanks(text, start, end)
  if (first === end) return undefined
  if (text.charCodeAt(first) === HASH) return parseComment(text, first + 1, end)
  const at = (index: number) => `column ${index - start + 1}`

  const nameEnd = scanName(text, first, end, true)
  if (nameEnd === first) return `${at(first)}: expected a metric name`
  const name = text.slice(first, nameEnd)
  const labels: Record<string, string> = Object.create(null)
  const afterName = text.charCodeAt(nameEnd)
  if (nameEnd < end && afterName !== OPEN_BRACE && !isBlank(afterName)) {
    return `${at(nameEnd)}: unexpected character in the metric name`
  }
  let index = skipBlanks(text, nameEnd, end)
  if (text.charCodeAt(index) === OPEN_BRACE) {
    let count = 0
    index += 1
    for (;;) {
      index = skipBlanks(text, index, end)
      if (text.charCodeAt(index) === CLOSE_BRACE) break
      const labelStart = index
      const labelEnd = scanName(text, index, end, false)
      if (labelEnd === index) return `${at(index)}: expected a label name or "}"`
      const label = text.slice(index, labelEnd)
      index = skipBlanks(text, labelEnd, end)
      if (text.charCodeAt(index) !== EQUALS) return `${at(index)}: expected "=" after "${label}"`
      index = skipBlanks(text, index + 1, end)
      if (text.charCodeAt(index) !== QUOTE) return `${at(index)}: expected a quoted label value`
      const value = scanLabelValue(text, index + 1, end)
      if ('error' in value) return `${at(value.at)}: ${value.error}`
      if (label in labels) return `${at(labelStart)}: label "${label}" given twice`
      count += 1
      if (count > maxLabels) return `more than ${maxLabels} labels`
      labels[label] = value.text
      index = skipBlanks(text, value.next, end)
      const separator = text.charCodeAt(index)
      if (separator === CLOSE_BRACE) break
      if (separator !== COMMA) return `${at(index)}: expected "," or "}" after a label value`
      index += 1
    }
    index += 1
  }

  const valueStart = skipBlanks(text, index, end)
  const valueEnd = scanToken(text, valueStart, end)
  if (valueEnd === valueStart) return `${at(valueStart)}: expected a value`
  const value = parseGoFloat(text.slice(valueStart, valueEnd))
  if (value === undefined) return `${at(valueStart)}: invalid value`
  const sample: PrometheusSample = { name, labels, value }
  const stampStart = skipBlanks(text, valueEnd, end)
  if (stampStart < end) {
    const stampEnd = scanToken(text, stampStart, end)
    const stamp = text.slice(stampStart, stampEnd)
    const timestampMs = /^-?\d{1,16}$/.test(stamp) ? Number(stamp) : Number.NaN
    if (!Number.isSafeInteger(timestampMs)) return `${at(stampStart)}: invalid timestamp`
    if (skipBlanks(text, stampEnd, end) < end) return `${at(stampEnd)}: unexpected text`
    sample.timestampMs = timestampMs
  }
  return { kind: 'sample', sample }
}

/** `# HELP name text`, `# TYPE name type` (type in any case), or any other comment. */
function parseComment(text: string, start: number, end: number): LineOutcome {
  const keywordStart = skipBlanks(text, start, end)
  const keywordEnd = scanToken(text, keywordStart, end)
  const keyword = text.slice(keywordStart, keywordEnd)
  if (keyword !== 'HELP' && keyword !== 'TYPE') return undefined
  const nameStart = skipBlanks(text, keywordEnd, end)
  if (nameStart === end) return undefined
  const nameEnd = scanName(text, nameStart, end, true)
  if (nameEnd === nameStart || (nameEnd < end && !isBlank(text.charCodeAt(nameEnd)))) {
    return `invalid metric name in ${keyword} line`
  }
  if (keyword === 'HELP' || nameEnd === end) return undefined
  const type = text.slice(nameEnd, end).trim().toLowerCase()
  if (!metricTypes.has(type)) return `unknown metric type "${type.slice(0, 40)}"`
  return { kind: 'type', name: text.slice(nameStart, nameEnd), type: type as PrometheusMetricType }
}

/** The label value after its opening quote, unescaped; or why it is not one. */
function scanLabelValue(
  text: string,
  start: number,
  end: number,
): { text: string; next: number } | { error: string; at: number } {
  let value = ''
  let chunk = start
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index)
    if (code === QUOTE) return { text: value + text.slice(chunk, index), next: index + 1 }
    if (code !== BACKSLASH) continue
    const escaped = text.charCodeAt(index + 1)
    const replacement =
      escaped === BACKSLASH ? '\\' : escaped === QUOTE ? '"' : escaped === 110 ? '\n' : undefined
    if (index + 1 >= end || replacement === undefined) {
      return { error: 'invalid escape sequence', at: index }
    }
    value += text.slice(chunk, index) + replacement
    index += 1
    chunk = index + 1
  }
  return { error: 'unterminated label value', at: start - 1 }
}

const decimal = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/
const infinity = /^[+-]?inf(?:inity)?$/i

/** A float as Go's strconv.ParseFloat reads it (hexadecimal forms aside); out of range is invalid. */
function parseGoFloat(token: string): number | undefined {
  if (decimal.test(token)) {
    const value = Number(token)
    return Number.isFinite(value) ? value : undefined
  }
  if (infinity.test(token)) return token.startsWith('-') ? -Infinity : Infinity
  return token.toLowerCase() === 'nan' ? Number.NaN : undefined
}

function isBlank(code: number): boolean {
  return code === SPACE || code === TAB
}

function skipBlanks(text: string, index: number, end: number): number {
  while (index < end && isBlank(text.charCodeAt(index))) index++
  return index
}

function scanToken(text: string, index: number, end: number): number {
  while (index < end && !isBlank(text.charCodeAt(index))) index++
  return index
}

/** The end of a metric name (colons allowed) or label name starting at `index`. */
function scanName(text: string, index: number, end: number, colons: boolean): number {
  const start = index
  while (index < end) {
    const code = text.charCodeAt(index)
    const letter = (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
    const digit = code >= 48 && code <= 57
    if (!(letter || (colons && code === 58) || (digit && index > start))) break
    index++
  }
  return index
}
