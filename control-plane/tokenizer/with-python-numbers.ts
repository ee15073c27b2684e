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

/**
 * The request body's fields, as JSON.parse gave them, with their numbers as Python's json
 * reads them from the body's text. vLLM parses the body with Python, where a tool schema's
 * `50.0` stays a float that a template prints `50.0` and an integer keeps every digit;
 * JavaScript's JSON has made `50.0` the integer 50. Each number of `fields` (the request's
 * tools, chat_template_kwargs, ...) becomes the template value Python read at the same
 * place of the body; everything else (strings, key order) is kept as parsed. The body is
 * read only when a field holds a number the two may read apart. Returns
 * `fields` unchanged when the text is not the JSON object it was parsed from (or nests
 * deeper than Python's json reads).
 */
export function withPythonNumbers<T extends Record<string, unknown>>(
  fields: T,
  bodyText: string,
): T {
  if (!hasAmbiguousNumber(fields)) return fields
  let body: Value
  try {
    body = readPythonJson(bodyText)
  } catch (error) {
    if (error instanceof JsonSyntaxError || KinfError.isInstance(error)) return fields
    throw error
  }
  if (body.type !== 'ObjectValue') return fields
  const entries = body.value as Map<string, Value>
  return Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [key, overlay(value, entries.get(key))]),
  ) as T
}
