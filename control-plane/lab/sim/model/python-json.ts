import { KinfError } from '../../../../shared/errors/kinf-error.ts'

/**
 * A Python float. JSON read into JavaScript loses the difference between `50.0` and `50`,
 * which Python keeps (json.loads gives a float, and a template's tojson prints "50.0"),
 * so the values vLLM renders are read into this model instead.
 */
export class PyFloat {
  readonly value: number
  constructor(value: number) {
    this.value = value
  }
}

/** A value as Python's json.loads gives it: dicts keep their key order, ints any size. */
export type PyValue =
  | null
  | boolean
  | string
  | number
  | bigint
  | PyFloat
  | PyValue[]
  | Map<string, PyValue>

/** A JSON object read as a Python dict. */
export type PyDict = Map<string, PyValue>

export function isPyDict(value: PyValue | undefined): value is PyDict {
  return value instanceof Map
}

const numberPattern = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y

/**
 * Python's json.loads: floats stay floats, integers of any size stay exact, objects keep
 * the key order of the text (a repeated key keeps its first place and its last value), and
 * NaN, Infinity and -Infinity are read as Python reads them. Throws a SyntaxError.
 */
export function parsePythonJson(text: string): PyValue {
  let at = 0
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at character ${at}`)
  }
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at++
  }
  const literal = (word: string, value: PyValue): PyValue => {
    if (!text.startsWith(word, at)) fail('Expecting value')
    at += word.length
    return value
  }
  const string = (): string => {
    at++
    let out = ''
    for (;;) {
      const end = stringRunLength(text, at)
      if (at + end >= text.length) fail('Unterminated string')
      out += text.slice(at, at + end)
      at += end
      const char = text[at]
      if (char === '"') {
        at++
        return out
      }
      if (char !== '\\') fail('Invalid control character')
      const escaped = text[at + 1]
      const simple: Record<string, string> = {
        '"': '"',
        '\\': '\\',
        '/': '/',
        b: '\b',
        f: '\f',
        n: '\n',
        r: '\r',
        t: '\t',
      }
      if (escaped !== undefined && escaped in simple) {
        out += simple[escaped]
        at += 2
      } else if (escaped === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) {
        out += String.fromCharCode(Number.parseInt(text.slice(at + 2, at + 6), 16))
        at += 6
      } else fail('Invalid \\escape')
    }
  }
  const value = (): PyValue => {
    space()
    const char = text[at]
    if (char === '{') {
      at++
      const dict: PyDict = new Map()
      space()
      if (text[at] === '}') {
        at++
        return dict
      }
      for (;;) {
        space()
        if (text[at] !== '"') fail('Expecting property name enclosed in double quotes')
        const key = string()
        space()
        if (text[at] !== ':') fail("Expecting ':' delimiter")
        at++
        dict.set(key, value())
        space()
        if (text[at] === '}') {
          at++
          return dict
        }
        if (text[at] !== ',') fail("Expecting ',' delimiter")
        at++
      }
    }
    if (char === '[') {
      at++
      const list: PyValue[] = []
      space()
      if (text[at] === ']') {
        at++
        return list
      }
      for (;;) {
        list.push(value())
        space()
        if (text[at] === ']') {
          at++
          return list
        }
        if (text[at] !== ',') fail("Expecting ',' delimiter")
        at++
      }
    }
    if (char === '"') return string()
    if (char === 't') return literal('true', true)
    if (char === 'f') return literal('false', false)
    if (char === 'n') return literal('null', null)
    if (char === 'N') return literal('NaN', new PyFloat(Number.NaN))
    if (char === 'I') return literal('Infinity', new PyFloat(Number.POSITIVE_INFINITY))
    if (text.startsWith('-Infinity', at))
      return literal('-Infinity', new PyFloat(Number.NEGATIVE_INFINITY))
    numberPattern.lastIndex = at
    const match = numberPattern.exec(text)
    if (match === null) return fail('Expecting value')
    at += match[0].length
    if (match[1] !== undefined || match[2] !== undefined) return new PyFloat(Number(match[0]))
    const int = Number(match[0])
    return Number.isSafeInteger(int) ? int : BigInt(match[0])
  }
  const result = value()
  space()
  if (at < text.length) fail('Extra data')
  return result
}

/** Characters from `from` up to a quote, a backslash or a control character. */
function stringRunLength(text: string, from: number): number {
  let i = from
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (code === 0x22 || code === 0x5c || code < 0x20) break
    i++
  }
  return i - from
}

/** A value parsed by JSON.parse as Python would have it: non-integral numbers are floats. */
export function fromJavaScript(value: unknown): PyValue {
  if (value === null || value === undefined) return null
  if (typeof value === 'number') return Number.isInteger(value) ? value : new PyFloat(value)
  if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'bigint')
    return value
  if (value instanceof PyFloat) return value
  if (Array.isArray(value)) return value.map(fromJavaScript)
  if (value instanceof Map)
    return new Map([...value].map(([k, v]) => [String(k), fromJavaScript(v)]))
  if (typeof value === 'object')
    return new Map(Object.entries(value).map(([k, v]) => [k, fromJavaScript(v)]))
  throw new KinfError('invalid_request', `not a JSON value: ${typeof value}`)
}

/** repr(float) (and str(float)): the shortest digits, in exponent form below 1e-4 or from 1e16. */
export function pyFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan'
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf'
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0'
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e')
  const exponent = Number(exponentText)
  const sign = mantissa.startsWith('-') ? '-' : ''
  const digits = mantissa.replace('-', '').replace('.', '')
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`
    const whole = digits.padEnd(exponent + 1, '0')
    const fraction = digits.slice(exponent + 1)
    return `${sign}${whole.slice(0, exponent + 1)}.${fraction === '' ? '0' : fraction}`
  }
  const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
  const magnitude = String(Math.abs(exponent)).padStart(2, '0')
  return `${sign}${head}e${exponent < 0 ? '-' : '+'}${magnitude}`
}

/** Characters Python's str.isspace() counts as whitespace (str.strip() and str.split()). */
const pythonSpace =
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000'

export function isPythonSpace(char: string): boolean {
  return pythonSpace.includes(char)
}

/** str.strip / lstrip / rstrip: whitespace, or the given characters. */
export function pyStrip(
  text: string,
  chars: string | null,
  side: 'both' | 'left' | 'right' = 'both',
): string {
  const strips = (char: string) => (chars === null ? isPythonSpace(char) : chars.includes(char))
  const units = [...text]
  let start = 0
  let end = units.length
  if (side !== 'right') while (start < end && strips(units[start] as string)) start++
  if (side !== 'left') while (end > start && strips(units[end - 1] as string)) end--
  return units.slice(start, end).join('')
}

/** str.split(sep, maxsplit), whitespace runs when sep is None. */
export function pySplit(text: string, sep: string | null, maxsplit = -1): string[] {
  if (sep !== null) {
    if (sep === '') throw new KinfError('invalid_request', 'ValueError: empty separator')
    const parts = text.split(sep)
    if (maxsplit < 0 || parts.length <= maxsplit + 1) return parts
    return [...parts.slice(0, maxsplit), parts.slice(maxsplit).join(sep)]
  }
  const out: string[] = []
  const units = [...text]
  let i = 0
  while (i < units.length) {
    while (i < units.length && isPythonSpace(units[i] as string)) i++
    if (i >= units.length) break
    if (maxsplit >= 0 && out.length >= maxsplit) {
      out.push(units.slice(i).join(''))
      break
    }
    let j = i
    while (j < units.length && !isPythonSpace(units[j] as string)) j++
    out.push(units.slice(i, j).join(''))
    i = j
  }
  return out
}

/** repr(str): single quotes unless the text has one and no double quote; escapes as Python. */
export function pyStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'"
  let out = quote
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0
    if (char === quote || char === '\\') out += `\\${char}`
    else if (char === '\n') out += '\\n'
    else if (char === '\r') out += '\\r'
    else if (char === '\t') out += '\\t'
    else if (char !== ' ' && /[\p{C}\p{Z}]/u.test(char)) {
      out +=
        code <= 0xff
          ? `\\x${code.toString(16).padStart(2, '0')}`
          : code <= 0xffff
            ? `\\u${code.toString(16).padStart(4, '0')}`
            : `\\U${code.toString(16).padStart(8, '0')}`
    } else out += char
  }
  return out + quote
}
