import { formatFloat, pyTypeName, type Value } from './template-values.ts'

export interface DumpOptions {
  ensureAscii?: boolean
  /** A number of spaces, or the text of one level; null (the default) prints on one line. */
  indent?: number | string | null
  /** [item separator, key separator]; Python's default is [", ", ": "], [",", ": "] with indent. */
  separators?: [string, string] | null
  sortKeys?: boolean
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

const hex4 = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`

/** Python's json string quoting: `"`, `\` and C0 controls, and all non-ASCII with ensure_ascii. */
export function quoteJson(text: string, ensureAscii = false): string {
  let out = '"'
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string
    const code = char.charCodeAt(0)
    const short = shortEscapes[char]
    if (short !== undefined) out += short
    else if (code < 0x20 || (ensureAscii && code > 0x7e)) out += hex4(code)
    else out += char
  }
  return `${out}"`
}

function numberText(value: Value): string {
  if (value.type === 'IntegerValue') return value.text ?? String(value.value)
  const number = value.value as number
  if (Number.isNaN(number)) return 'NaN'
  if (!Number.isFinite(number)) return number > 0 ? 'Infinity' : '-Infinity'
  return formatFloat(number)
}

/**
 * Python's `json.dumps` of a template value, as transformers' `tojson` filter calls it
 * (ensure_ascii=False unless asked). Floats print as Python prints them (1.0, 1e+16),
 * dicts in their key order. What json.dumps cannot encode (an undefined value, a
 * function) throws its TypeError; nesting deeper than Python's recursion limit throws.
 */
export function dumpJson(value: Value, options: DumpOptions = {}): string {
  const indent =
    typeof options.indent === 'number' ? ' '.repeat(options.indent) : (options.indent ?? null)
  const [itemSep, keySep] = options.separators ?? (indent === null ? [', ', ': '] : [',', ': '])
  const quote = (text: string) => quoteJson(text, options.ensureAscii === true)
  const visit = (item: Value, depth: number): string => {
    if (depth > 990) throw new RangeError('maximum recursion depth exceeded while encoding JSON')
    switch (item.type) {
      case 'StringValue':
        return quote(item.value as string)
      case 'IntegerValue':
      case 'FloatValue':
        return numberText(item)
      case 'BooleanValue':
        return item.value ? 'true' : 'false'
      case 'NullValue':
        return 'null'
      case 'ArrayValue':
      case 'TupleValue': {
        const items = (item.value as Value[]).map((child) => visit(child, depth + 1))
        return wrap('[', ']', items, depth)
      }
      case 'ObjectValue':
      case 'KeywordArgumentsValue': {
        let entries = [...(item.value as Map<string, Value>)]
        if (options.sortKeys) entries = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        const items = entries.map(
          ([key, child]) => `${quote(key)}${keySep}${visit(child, depth + 1)}`,
        )
        return wrap('{', '}', items, depth)
      }
      default:
        throw new TypeError(`Object of type ${pyTypeName(item)} is not JSON serializable`)
    }
  }
  const wrap = (open: string, close: string, items: string[], depth: number) => {
    if (items.length === 0) return `${open}${close}`
    if (indent === null) return `${open}${items.join(itemSep)}${close}`
    const inner = `\n${indent.repeat(depth + 1)}`
    return `${open}${inner}${items.join(`${itemSep}${inner}`)}\n${indent.repeat(depth)}${close}`
  }
  return visit(value, 0)
}
