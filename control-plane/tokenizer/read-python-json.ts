import { KinfError } from '../../shared/errors/kinf-error.ts'
import { bool, dict, float, int, list, none, str, type Value } from './template-values.ts'

export class JsonSyntaxError extends Error {}

/**
 * Python's json.loads gives up near its recursion limit (1000, a RecursionError); so does
 * this reader, before its recursion overflows JavaScript's stack.
 */
export const maxJsonNesting = 1_000

const numberPattern = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y
const whitespacePattern = /[ \t\n\r]*/y
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's json refuses raw control characters in a string, so the run of plain characters stops at them.
const plainPattern = /[^"\\\u0000-\u001f]*/y
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
const literals: [string, () => Value][] = [
  ['true', () => bool(true)],
  ['false', () => bool(false)],
  ['null', () => none()],
  ['NaN', () => float(Number.NaN)],
  ['Infinity', () => float(Number.POSITIVE_INFINITY)],
  ['-Infinity', () => float(Number.NEGATIVE_INFINITY)],
]

/**
 * Reads JSON text as Python's `json.loads` does, into template values: ints keep every
 * digit, floats stay floats (`1.0` prints as 1.0), objects keep their key order (a
 * repeated key keeps its first place and its last value, like a dict), NaN and Infinity
 * are accepted. Throws JsonSyntaxError for text json.loads refuses, and KinfError
 * invalid_request past Python's nesting limit.
 */
export function readPythonJson(text: string): Value {
  let at = 0
  let depth = 0
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
      // The run up to the next quote, backslash or control character, taken in one slice.
      plainPattern.lastIndex = at
      plainPattern.exec(text)
      out += text.slice(at, plainPattern.lastIndex)
      at = plainPattern.lastIndex
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
  const nest = () => {
    if (++depth > maxJsonNesting)
      throw new KinfError(
        'invalid_request',
        `tool call arguments are nested more than ${maxJsonNesting} levels deep`,
      )
  }
  const readValue = (): Value => {
    skipWhitespace()
    const char = text[at]
    if (char === '"') return str(readString())
    if (char === '[') {
      nest()
      at++
      const items: Value[] = []
      skipWhitespace()
      while (text[at] !== ']') {
        if (items.length > 0) expect(',')
        items.push(readValue())
        skipWhitespace()
      }
      at++
      depth--
      return list(items)
    }
    if (char === '{') {
      nest()
      at++
      const entries = new Map<string, Value>()
      skipWhitespace()
      let first = true
      while (text[at] !== '}') {
        if (!first) {
          expect(',')
          skipWhitespace()
        }
        first = false
        const key = readString()
        skipWhitespace()
        expect(':')
        entries.set(key, readValue())
        skipWhitespace()
      }
      at++
      depth--
      return dict(entries)
    }
    for (const [word, make] of literals) {
      if (text.startsWith(word, at)) {
        at += word.length
        return make()
      }
    }
    numberPattern.lastIndex = at
    const number = numberPattern.exec(text)
    if (number === null) throw new JsonSyntaxError(`unexpected ${char ?? 'end'} at ${at}`)
    at = numberPattern.lastIndex
    if (number[1] === undefined && number[2] === undefined) {
      const digits = /^-0+$/.test(number[0]) ? '0' : number[0]
      const value = Number(digits)
      return Number.isSafeInteger(value) ? int(value) : int(value, digits)
    }
    return float(Number(number[0]))
  }
  const value = readValue()
  skipWhitespace()
  if (at !== text.length) throw new JsonSyntaxError(`extra data at ${at}`)
  return value
}
