import { Environment } from '@huggingface/jinja'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { isPyDict, PyFloat, type PyValue, pyFloatRepr, pyStringRepr } from './python-json.ts'

/** A value inside @huggingface/jinja's interpreter: its `type` names the class. */
export interface JinjaValue {
  type: string
  value: unknown
  __bool__(): { value: boolean }
}

type Make = new (value?: unknown) => JinjaValue

/**
 * The interpreter's value classes are not exported; a throwaway environment converts one
 * value of each kind, and the classes are taken from the results. Nothing of the library
 * is changed, so other users of it in the process (the router) are unaffected.
 */
function valueClasses() {
  const probe = new Environment()
  const of = (name: string, value: unknown) =>
    (probe.set(name, value) as unknown as JinjaValue).constructor as Make
  return {
    String: of('s', ''),
    Integer: of('i', 1),
    Float: of('f', 0.5),
    Boolean: of('b', true),
    Null: of('n', null),
    Undefined: of('u', undefined),
    Array: of('a', []),
    Object: of('o', {}),
    Function: of('fn', () => null),
  }
}

export const jinja = valueClasses()

export const str = (text: string) => new jinja.String(text)

/** Marks an array the interpreter iterates and unpacks (its type must stay ArrayValue) as a tuple. */
const isTuple = Symbol('python tuple')

/** A Python tuple: printed as `(a, b)`, unpacked by `for k, v in ...` as an array is. */
export function tuple(items: JinjaValue[]): JinjaValue {
  return Object.assign(new jinja.Array(items), { [isTuple]: true })
}

function tupleLike(value: JinjaValue): boolean {
  return value.type === 'TupleValue' || (value as { [isTuple]?: boolean })[isTuple] === true
}
export const bool = (flag: boolean) => new jinja.Boolean(flag)

/** A Python value as the template sees it: floats stay floats, dicts keep their order. */
export function toJinja(value: PyValue | undefined): JinjaValue {
  if (value === undefined) return new jinja.Undefined()
  if (value === null) return new jinja.Null()
  if (typeof value === 'string') return new jinja.String(value)
  if (typeof value === 'boolean') return new jinja.Boolean(value)
  if (typeof value === 'number' || typeof value === 'bigint') return new jinja.Integer(value)
  if (value instanceof PyFloat) return new jinja.Float(value.value)
  if (Array.isArray(value)) return new jinja.Array(value.map(toJinja))
  if (isPyDict(value)) return new jinja.Object(new Map([...value].map(([k, v]) => [k, toJinja(v)])))
  throw new KinfError('internal', 'not a Python value')
}

/** type(x).__name__ of the value, for Python's error messages. */
export function pythonTypeName(value: JinjaValue): string {
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

/** str(x), as `{{ x }}` prints it: True, None, 1.0, ['a'], {'k': 1}. */
export function pythonStr(value: JinjaValue): string {
  switch (value.type) {
    case 'StringValue':
      return value.value as string
    case 'UndefinedValue':
      return ''
    default:
      return pythonRepr(value)
  }
}

function pythonRepr(value: JinjaValue): string {
  switch (value.type) {
    case 'StringValue':
      return pyStringRepr(value.value as string)
    case 'IntegerValue':
      return String(value.value)
    case 'FloatValue':
      return pyFloatRepr(value.value as number)
    case 'BooleanValue':
      return value.value ? 'True' : 'False'
    case 'NullValue':
      return 'None'
    case 'UndefinedValue':
      return ''
    case 'ArrayValue':
      if (!tupleLike(value)) return `[${(value.value as JinjaValue[]).map(pythonRepr).join(', ')}]`
      return tupleRepr(value)
    case 'TupleValue':
      return tupleRepr(value)
    case 'ObjectValue':
    case 'KeywordArgumentsValue':
      return `{${[...(value.value as Map<string, JinjaValue>)].map(([k, v]) => `${pyStringRepr(k)}: ${pythonRepr(v)}`).join(', ')}}`
    case 'NamespaceValue':
      return `<Namespace ${pythonRepr({ ...value, type: 'ObjectValue' })}>`
    default:
      return String(value.value)
  }
}

function tupleRepr(value: JinjaValue): string {
  const items = (value.value as JinjaValue[]).map(pythonRepr)
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`
}

export interface DumpOptions {
  indent: number | string | null
  separators: [string, string] | null
  sortKeys: boolean
  ensureAscii: boolean
}

/**
 * json.dumps, as transformers' tojson filter calls it (ensure_ascii False unless asked):
 * Python's separators (", " and ": ", or "," with an indent), floats as repr() prints them,
 * NaN and Infinity as Python writes them; anything else is Python's TypeError.
 */
export function pythonJsonDumps(value: JinjaValue, options: DumpOptions, depth = 0): string {
  const indent =
    options.indent === null
      ? null
      : typeof options.indent === 'number'
        ? ' '.repeat(options.indent)
        : options.indent
  const [itemSeparator, keySeparator] =
    options.separators ?? (indent === null ? [', ', ': '] : [',', ': '])
  const open = (items: string[], left: string, right: string) => {
    if (items.length === 0) return `${left}${right}`
    if (indent === null) return `${left}${items.join(itemSeparator)}${right}`
    const inner = `\n${indent.repeat(depth + 1)}`
    return `${left}${inner}${items.join(itemSeparator + inner)}\n${indent.repeat(depth)}${right}`
  }
  switch (value.type) {
    case 'NullValue':
      return 'null'
    case 'BooleanValue':
      return value.value ? 'true' : 'false'
    case 'IntegerValue':
      return String(value.value)
    case 'FloatValue': {
      const number = value.value as number
      if (Number.isNaN(number)) return 'NaN'
      if (!Number.isFinite(number)) return number > 0 ? 'Infinity' : '-Infinity'
      return pyFloatRepr(number)
    }
    case 'StringValue':
      return jsonString(value.value as string, options.ensureAscii)
    case 'ArrayValue':
    case 'TupleValue':
      return open(
        (value.value as JinjaValue[]).map((item) => pythonJsonDumps(item, options, depth + 1)),
        '[',
        ']',
      )
    case 'ObjectValue':
    case 'KeywordArgumentsValue':
    case 'NamespaceValue': {
      let entries = [...(value.value as Map<string, JinjaValue>)]
      if (options.sortKeys) entries = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      return open(
        entries.map(
          ([key, item]) =>
            `${jsonString(key, options.ensureAscii)}${keySeparator}${pythonJsonDumps(item, options, depth + 1)}`,
        ),
        '{',
        '}',
      )
    }
    default:
      throw new TypeError(`Object of type ${pythonTypeName(value)} is not JSON serializable`)
  }
}

function jsonString(text: string, ensureAscii: boolean): string {
  const json = JSON.stringify(text)
  return ensureAscii
    ? json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : json
}
