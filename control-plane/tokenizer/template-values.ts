import { Environment } from '@huggingface/jinja'

/**
 * The values a `@huggingface/jinja` template computes with. The package exports its
 * interpreter but not its value classes; they are taken from values it creates, so that
 * the template's data can be built here with Python's types (an int stays an int, a
 * float a float, a dict keeps its key order) and read back by type.
 */
export interface Value {
  type: string
  value: unknown
  /** Python-exact digits of an int too large for a double (json.loads keeps them). */
  text?: string
  __bool__(): { value: boolean }
  builtins: Map<string, Value>
}

export type FunctionBody = (args: Value[], scope: unknown) => Value
type Constructor<T> = new (value: T) => Value

const probe = new Environment()
let probes = 0
function classOf<T>(sample: T): Constructor<T> {
  return (probe.set(`probe${probes++}`, sample) as unknown as { constructor: Constructor<T> })
    .constructor
}

const StringValue = classOf('')
const IntegerValue = classOf(1)
const FloatValue = classOf(1.5)
const BooleanValue = classOf(true)
const NullValue = classOf(null)
const UndefinedValue = classOf(undefined)
const ArrayValue = classOf<Value[]>([])
const ObjectValue = classOf<Map<string, Value>>({} as Map<string, Value>)
const FunctionValue = classOf<FunctionBody>(() => ({}) as Value)
const RuntimeValue = Object.getPrototypeOf(StringValue.prototype).constructor as abstract new (
  ...args: never[]
) => Value

export const isValue = (value: unknown): value is Value => value instanceof RuntimeValue

export const str = (value: string): Value => new StringValue(value)
export const int = (value: number, text?: string): Value => {
  const made = new IntegerValue(value)
  if (text !== undefined) made.text = text
  return made
}
export const float = (value: number): Value => new FloatValue(value)
export const bool = (value: boolean): Value => new BooleanValue(value)
export const none = (): Value => new NullValue(null)
export const undefinedValue = (): Value => new UndefinedValue(undefined)
export const list = (items: Value[]): Value => new ArrayValue(items)
export const dict = (entries: Map<string, Value>): Value => new ObjectValue(entries)
export const fn = (body: FunctionBody): Value => new FunctionValue(body)

/** A list of two-item lists: what `items()` gives, as `@huggingface/jinja` builds tuples. */
export const pairs = (entries: Iterable<[string, Value]>): Value =>
  list([...entries].map(([key, value]) => list([str(key), value])))

/**
 * A JavaScript value as the template sees it: objects become dicts in their key order,
 * integral numbers ints (JSON.parse has already turned 1.0 into 1), others floats, undefined an undefined. Values already built
 * (a tool call's arguments read as Python reads them) are kept.
 */
export function toValue(input: unknown): Value {
  if (isValue(input)) return input
  switch (typeof input) {
    case 'string':
      return str(input)
    case 'number':
      // -0 can only come from a float literal (-0.0), which Python keeps a float.
      return Number.isInteger(input) && !Object.is(input, -0) ? int(input) : float(input)
    case 'boolean':
      return bool(input)
    case 'undefined':
      return undefinedValue()
    case 'object': {
      if (input === null) return none()
      if (Array.isArray(input)) return list(input.map(toValue))
      const entries = new Map<string, Value>()
      for (const [key, value] of Object.entries(input)) entries.set(key, toValue(value))
      return dict(entries)
    }
    default:
      throw new TypeError(`a template value cannot be a ${typeof input}`)
  }
}

/** Python's `str.isspace()` characters: what `strip()` with no argument removes. */
export const pythonWhitespace = new Set(
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000',
)

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan'
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf'
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

const intText = (value: Value) => value.text ?? String(value.value)

/** Python's `repr(str)`: single quotes unless the text has one and no double quote. */
function reprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'"
  let out = quote
  for (const char of text) {
    const code = char.codePointAt(0) as number
    if (char === quote || char === '\\') out += `\\${char}`
    else if (char === '\n') out += '\\n'
    else if (char === '\r') out += '\\r'
    else if (char === '\t') out += '\\t'
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0))
      out += `\\x${code.toString(16).padStart(2, '0')}`
    else if (
      /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]$/u.test(char) ||
      (code !== 0x20 && /^\p{Zs}$/u.test(char))
    )
      out +=
        code <= 0xff
          ? `\\x${code.toString(16).padStart(2, '0')}`
          : code <= 0xffff
            ? `\\u${code.toString(16).padStart(4, '0')}`
            : `\\U${code.toString(16).padStart(8, '0')}`
    else out += char
  }
  return out + quote
}

/** Python's `repr()` of a template value, as printing a list or dict shows its items. */
export function pyRepr(value: Value): string {
  if (value.type === 'StringValue') return reprString(value.value as string)
  if (value.type === 'ArrayValue') return `[${(value.value as Value[]).map(pyRepr).join(', ')}]`
  if (value.type === 'TupleValue') {
    const items = (value.value as Value[]).map(pyRepr)
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`
  }
  if (value.type === 'ObjectValue' || value.type === 'KeywordArgumentsValue') {
    const entries = [...(value.value as Map<string, Value>)]
    return `{${entries.map(([key, item]) => `${reprString(key)}: ${pyRepr(item)}`).join(', ')}}`
  }
  return pyStr(value)
}

/** Python's `str()` of a template value: what `{{ value }}`, `~` and `|string` print. */
export function pyStr(value: Value): string {
  switch (value.type) {
    case 'StringValue':
      return value.value as string
    case 'IntegerValue':
      return intText(value)
    case 'FloatValue':
      return formatFloat(value.value as number)
    case 'BooleanValue':
      return value.value ? 'True' : 'False'
    case 'NullValue':
      return 'None'
    case 'UndefinedValue':
      return ''
    case 'NamespaceValue':
      return `<Namespace ${pyRepr(dict(value.value as Map<string, Value>))}>`
    case 'FunctionValue':
      return '<function>'
    default:
      return pyRepr(value)
  }
}

/** Python's `==` between template values: by value, 1 == 1.0 == True, dicts ignoring order. */
export function pyEquals(a: Value, b: Value): boolean {
  const numeric = (v: Value) =>
    v.type === 'IntegerValue' || v.type === 'FloatValue' || v.type === 'BooleanValue'
  if (numeric(a) && numeric(b)) {
    if (a.text !== undefined && b.text !== undefined) return a.text === b.text
    return Number(a.value) === Number(b.value)
  }
  const sequence = (v: Value) => v.type === 'ArrayValue' || v.type === 'TupleValue'
  if (sequence(a) && sequence(b)) {
    if (a.type !== b.type) return false
    const [x, y] = [a.value as Value[], b.value as Value[]]
    return x.length === y.length && x.every((item, i) => pyEquals(item, y[i] as Value))
  }
  if (a.type === 'ObjectValue' && b.type === 'ObjectValue') {
    const [x, y] = [a.value as Map<string, Value>, b.value as Map<string, Value>]
    if (x.size !== y.size) return false
    for (const [key, item] of x) {
      const other = y.get(key)
      if (other === undefined || !pyEquals(item, other)) return false
    }
    return true
  }
  if (a.type !== b.type) return false
  if (a.type === 'UndefinedValue' || a.type === 'NullValue') return true
  return a.value === b.value
}

/** Python's `len()`: strings count code points, not UTF-16 units. */
export function pyLength(value: Value): number | null {
  if (value.type === 'StringValue') {
    let count = 0
    for (const _ of value.value as string) count++
    return count
  }
  if (value.type === 'ArrayValue' || value.type === 'TupleValue')
    return (value.value as Value[]).length
  if (value.type === 'ObjectValue') return (value.value as Map<string, Value>).size
  if (value.type === 'UndefinedValue') return 0
  return null
}

/** A Python type name, for error messages as Python words them. */
export function pyTypeName(value: Value): string {
  const names: Record<string, string> = {
    StringValue: 'str',
    IntegerValue: 'int',
    FloatValue: 'float',
    BooleanValue: 'bool',
    NullValue: 'NoneType',
    UndefinedValue: 'Undefined',
    ArrayValue: 'list',
    TupleValue: 'tuple',
    ObjectValue: 'dict',
    KeywordArgumentsValue: 'dict',
    NamespaceValue: 'Namespace',
    FunctionValue: 'function',
  }
  return names[value.type] ?? value.type
}
