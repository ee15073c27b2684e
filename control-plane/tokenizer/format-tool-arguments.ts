import { KinfError } from '../../shared/errors/kinf-error.ts'

/**
 * A JSON value as Python's `json.loads` gives it: numbers keep their spelling so that
 * ints stay exact and floats print as Python prints them, objects keep their key order
 * (a repeated key keeps its first place and its last value, like a dict).
 */
type PyValue =
  | { kind: 'int'; text: string }
  | { kind: 'float'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'literal'; text: 'true' | 'false' | 'null' }
  | { kind: 'array'; items: PyValue[] }
  | { kind: 'object'; entries: Map<string, PyValue> }

class JsonSyntaxError extends Error {}

/**
 * Python's json.loads gives up near its recursion limit (1000, a RecursionError); so does
 * this reader, before its recursion overflows JavaScript's stack.
 */
const maxNesting = 1_000

const numberPattern = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y
const whitespacePattern = /[ \t\n\r]*/y
const escapes: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
}

/** A recursive-descent reader with the grammar of Python's `json.loads` (NaN and Infinity too). */
function readJson(text: string): PyValue {
  let at = 0
  const skipWhitespace = () => {
    whitespacePattern.lastIndex = at
    whitespacePattern.exec(text)
    at = whitespacePattern.lastIndex
  }
  const expect = (char: string) => {
    if (text[at] !== char) throw new JsonSyntaxError(`expected ${char} at ${at}`)
    at++
  }
  const readString = (): string => {
    expect('"')
    let out = ''
    for (;;) {
      const char = text[at++]
      if (char === undefined || char < ' ') throw new JsonSyntaxError(`bad string at ${at}`)
      if (char === '"') return out
      if (char !== '\\') {
        out += char
        continue
      }
      const escaped = text[at++] ?? ''
      if (escaped === 'u') {
        const hex = text.slice(at, at + 4)
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError(`bad \\u escape at ${at}`)
        out += String.fromCharCode(Number.parseInt(hex, 16))
        at += 4
      } else if (escaped in escapes) {
        out += escapes[escaped]
      } else {
        throw new JsonSyntaxError(`bad escape at ${at}`)
      }
    }
  }
  let depth = 0
  const nest = () => {
    if (++depth > maxNesting)
      throw new KinfError(
        'invalid_request',
        `tool call arguments are nested more than ${maxNesting} levels deep`,
      )
  }
  const readValue = (): PyValue => {
    skipWhitespace()
    const char = text[at]
    if (char === '"') return { kind: 'string', value: readString() }
    if (char === '[') {
      nest()
      at++
      const items: PyValue[] = []
      skipWhitespace()
      while (text[at] !== ']') {
        if (items.length > 0) expect(',')
        items.push(readValue())
        skipWhitespace()
      }
      at++
      depth--
      return { kind: 'array', items }
    }
    if (char === '{') {
      nest()
      at++
      const entries = new Map<string, PyValue>()
      skipWhitespace()
      while (text[at] !== '}') {
        if (entries.size > 0) {
          expect(',')
          skipWhitespace()
        }
        const key = readString()
        skipWhitespace()
        expect(':')
        entries.set(key, readValue())
        skipWhitespace()
      }
      at++
      depth--
      return { kind: 'object', entries }
    }
    for (const [word, value] of [
      ['true', { kind: 'literal', text: 'true' }],
      ['false', { kind: 'literal', text: 'false' }],
      ['null', { kind: 'literal', text: 'null' }],
      ['NaN', { kind: 'float', value: Number.NaN }],
      ['Infinity', { kind: 'float', value: Number.POSITIVE_INFINITY }],
      ['-Infinity', { kind: 'float', value: Number.NEGATIVE_INFINITY }],
    ] as const) {
      if (text.startsWith(word, at)) {
        at += word.length
        return value
      }
    }
    numberPattern.lastIndex = at
    const number = numberPattern.exec(text)
    if (number === null) throw new JsonSyntaxError(`unexpected ${char ?? 'end'} at ${at}`)
    at = numberPattern.lastIndex
    if (number[1] === undefined && number[2] === undefined) {
      return { kind: 'int', text: /^-0+$/.test(number[0]) ? '0' : number[0] }
    }
    return { kind: 'float', value: Number(number[0]) }
  }
  const value = readValue()
  skipWhitespace()
  if (at !== text.length) throw new JsonSyntaxError(`extra data at ${at}`)
  return value
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity'
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0'
  const sign = value < 0 ? '-' : ''
  const [mantissa = '', exponentText = '0'] = Math.abs(value).toExponential().split('e')
  const digits = mantissa.replace('.', '')
  const exponent = Number(exponentText)
  const point = exponent + 1
  if (point > 16 || point < -3) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : ''
    const magnitude = String(Math.abs(exponent)).padStart(2, '0')
    return `${sign}${digits[0]}${fraction}e${exponent < 0 ? '-' : '+'}${magnitude}`
  }
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
}

const shortEscapes: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
}

/** Python's `json.dumps(value, ensure_ascii=False)` string quoting: only `"`, `\` and C0 controls. */
function quote(value: string): string {
  let out = '"'
  for (const char of value) {
    const short = shortEscapes[char]
    if (short !== undefined) out += short
    else if (char < ' ') out += `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`
    else out += char
  }
  return `${out}"`
}

/** Python's `json.dumps(value, ensure_ascii=False)` with its default `", "` and `": "` separators. */
function dump(value: PyValue): string {
  switch (value.kind) {
    case 'int':
    case 'literal':
      return value.text
    case 'float':
      return formatFloat(value.value)
    case 'string':
      return quote(value.value)
    case 'array':
      return `[${value.items.map(dump).join(', ')}]`
    case 'object':
      return `{${[...value.entries].map(([key, item]) => `${quote(key)}: ${dump(item)}`).join(', ')}}`
  }
}

/**
 * What Qwen3's chat template prints for the `arguments` of an assistant tool call, given
 * the JSON string an OpenAI client sends. vLLM replaces the string with `json.loads` of
 * it (`{}` when it is not valid JSON) and the template prints a non-string through
 * transformers' `tojson` (`json.dumps(..., ensure_ascii=False)`), a string as it is. The
 * result is meant to be handed to the template as a string, which it prints verbatim.
 * Arguments nested deeper than Python could read are refused (KinfError invalid_request).
 */
export function formatToolArguments(argumentsJson: string): string {
  let value: PyValue
  try {
    value = readJson(argumentsJson)
  } catch (error) {
    if (error instanceof JsonSyntaxError) return '{}'
    throw error
  }
  return value.kind === 'string' ? value.value : dump(value)
}
