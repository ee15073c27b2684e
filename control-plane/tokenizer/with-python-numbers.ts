import { KinfError } from '../../shared/errors/kinf-error.ts'
import { JsonSyntaxError, readPythonJson } from './read-python-json.ts'
import type { Value } from './template-values.ts'

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.getPrototypeOf(value) === Object.prototype

/** `parsed` with each number replaced by the int or float Python read at the same place. */
function overlay(parsed: unknown, python: Value | undefined): unknown {
  if (python === undefined) return parsed
  if (typeof parsed === 'number')
    return python.type === 'IntegerValue' || python.type === 'FloatValue' ? python : parsed
  if (Array.isArray(parsed)) {
    if (python.type !== 'ArrayValue') return parsed
    const items = python.value as Value[]
    return parsed.length === items.length
      ? parsed.map((item, i) => overlay(item, items[i]))
      : parsed
  }
  if (isPlainObject(parsed)) {
    if (python.type !== 'ObjectValue') return parsed
    const entries = python.value as Map<string, Value>
    return Object.fromEntries(
      Object.entries(parsed).map(([key, item]) => [key, overlay(item, entries.get(key))]),
    )
  }
  return parsed
}

/**
 * Whether a parsed value holds a number Python may read otherwise: an integral one (`50.0`
 * and `50` both parse to 50; `-0.0` and `-0` to -0) or one past 2^53 (Python keeps every
 * digit of an int). Other numbers are the same double in both, printed as Python prints it.
 */
function hasAmbiguousNumber(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value)
  if (Array.isArray(value)) return value.some(hasAmbiguousNumber)
  if (isPlainObject(value)) return Object.values(value).some(hasAmbiguousNumber)
  return false
}

const spacePattern = /[ \t\n\r]*/y

/**
 * The text of each member of a JSON object's text, by key (a repeated key's last, as a
 * dict keeps it), found without reading the values: only the fields asked for are read
 * as Python reads them, not a whole conversation. Null when the text is not an object.
 */
function memberTexts(text: string): Map<string, string> | null {
  let at = 0
  const skipSpace = () => {
    spacePattern.lastIndex = at
    spacePattern.exec(text)
    at = spacePattern.lastIndex
  }
  /** Past a string (at its opening quote): to the first quote not escaped. */
  const skipString = (): string | null => {
    const start = at
    let from = at + 1
    for (;;) {
      const quote = text.indexOf('"', from)
      if (quote === -1) return null
      let backslashes = 0
      while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
      from = quote + 1
      if (backslashes % 2 === 0) {
        at = from
        return text.slice(start, at)
      }
    }
  }
  /** Past one member's value: strings skipped whole, brackets counted. */
  const skipValue = (): boolean => {
    let depth = 0
    for (;;) {
      skipSpace()
      const char = text[at]
      if (char === undefined) return false
      if (depth === 0 && (char === ',' || char === '}')) return true
      if (char === '"') {
        if (skipString() === null) return false
        continue
      }
      if (char === '{' || char === '[') depth++
      else if (char === '}' || char === ']') depth--
      at++
    }
  }
  const members = new Map<string, string>()
  skipSpace()
  if (text[at] !== '{') return null
  at++
  for (;;) {
    skipSpace()
    if (text[at] === '}') return members
    const key = skipString()
    if (key === null) return null
    skipSpace()
    if (text[at] !== ':') return null
    const start = ++at
    if (!skipValue()) return null
    members.set(JSON.parse(key) as string, text.slice(start, at))
    if (text[at] === ',') at++
    else if (text[at] === '}') return members
    else return null
  }
}

/** The value Python's json reads from a member's text, or undefined when it does not read. */
function readMember(text: string | undefined): Value | undefined {
  if (text === undefined) return undefined
  try {
    return readPythonJson(text)
  } catch (error) {
    if (error instanceof JsonSyntaxError || KinfError.isInstance(error)) return undefined
    throw error
  }
}

/**
 * The request body's fields, as JSON.parse gave them, with their numbers as Python's json
 * reads them from the body's text. vLLM parses the body with Python, where a tool schema's
 * `50.0` stays a float that a template prints `50.0` and an integer keeps every digit;
 * JavaScript's JSON has made `50.0` the integer 50. Each number of `fields` (the request's
 * tools, chat_template_kwargs, ...) becomes the template value Python read at the same
 * place of the body; everything else (strings, key order) is kept as parsed. Only a field
 * holding a number the two may read apart is read again, from its own member of the body.
 * A field is left as parsed when the text does not hold it (or nests deeper than
 * Python's json reads).
 */
export function withPythonNumbers<T extends Record<string, unknown>>(
  fields: T,
  bodyText: string,
): T {
  const ambiguous = Object.entries(fields).filter(([, value]) => hasAmbiguousNumber(value))
  if (ambiguous.length === 0) return fields
  const members = memberTexts(bodyText)
  if (members === null) return fields
  const read = ambiguous.map(([key, value]) => [key, overlay(value, readMember(members.get(key)))])
  return { ...fields, ...Object.fromEntries(read) }
}
