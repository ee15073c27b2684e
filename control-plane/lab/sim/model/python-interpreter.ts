import { type Environment, Interpreter } from '@huggingface/jinja'
import {
  bool,
  type JinjaValue,
  jinja,
  pythonJsonDumps,
  pythonStr,
  pythonTypeName,
  str,
  tuple,
} from './jinja-values.ts'
import { isPythonSpace, pySplit, pyStrip } from './python-json.ts'

/** What jinja2 raises: raise_exception's TemplateError, or Python's TypeError and the like. */
export class TemplateRenderError extends Error {
  readonly pythonType: string
  constructor(pythonType: string, message: string) {
    super(message)
    this.pythonType = pythonType
  }
}

interface Node {
  type: string
  [key: string]: unknown
}
type Args = [JinjaValue[], Map<string, JinjaValue>]

/** The interpreter's own methods this class builds on (they are not in its public typings). */
interface InterpreterInternals {
  evaluate(node: unknown, environment: Environment): JinjaValue
  evaluateArguments(args: unknown[], environment: Environment): Args
  evaluateBinaryExpression(node: Node, environment: Environment): JinjaValue
  evaluateBlock(statements: Node[], environment: Environment): JinjaValue
  applyFilter(operand: JinjaValue, filter: Node, environment: Environment): JinjaValue
  evaluateTestExpression(node: Node, environment: Environment): JinjaValue
  evaluateMemberExpression(node: Node, environment: Environment): JinjaValue
  run(program: unknown): JinjaValue
}

const Base = Interpreter as unknown as new (environment: Environment) => InterpreterInternals

/** Nodes that are statements: what they evaluate to is their output, not a value to print. */
const statements = new Set([
  'Set',
  'If',
  'For',
  'Macro',
  'CallStatement',
  'FilterStatement',
  'Break',
  'Continue',
  'Comment',
])

type Test = (value: JinjaValue, ...args: JinjaValue[]) => boolean
const numeric = (v: JinjaValue) => ['IntegerValue', 'FloatValue', 'BooleanValue'].includes(v.type)
const same = (a: JinjaValue, b: JinjaValue) =>
  a.value === b.value || (numeric(a) && numeric(b) && Number(a.value) === Number(b.value))

/** jinja2's tests (jinja2/tests.py), as they judge Python values. */
const tests: Record<string, Test> = {
  defined: (v) => v.type !== 'UndefinedValue',
  undefined: (v) => v.type === 'UndefinedValue',
  none: (v) => v.type === 'NullValue',
  boolean: (v) => v.type === 'BooleanValue',
  true: (v) => v.type === 'BooleanValue' && v.value === true,
  false: (v) => v.type === 'BooleanValue' && v.value === false,
  integer: (v) => v.type === 'IntegerValue',
  float: (v) => v.type === 'FloatValue',
  number: numeric,
  string: (v) => v.type === 'StringValue',
  mapping: (v) => v.type === 'ObjectValue' || v.type === 'KeywordArgumentsValue',
  iterable: (v) =>
    ['StringValue', 'ArrayValue', 'TupleValue', 'ObjectValue', 'KeywordArgumentsValue'].includes(
      v.type,
    ),
  sequence: (v) =>
    ['StringValue', 'ArrayValue', 'TupleValue', 'ObjectValue', 'KeywordArgumentsValue'].includes(
      v.type,
    ),
  callable: (v) => v.type === 'FunctionValue',
  odd: (v) => Number(v.value) % 2 !== 0,
  even: (v) => Number(v.value) % 2 === 0,
  lower: (v) => v.type === 'StringValue' && v.value === (v.value as string).toLowerCase(),
  upper: (v) => v.type === 'StringValue' && v.value === (v.value as string).toUpperCase(),
  eq: same,
  equalto: same,
  '==': same,
  ne: (a, b) => !same(a, b),
  '!=': (a, b) => !same(a, b),
  in: (a, b) =>
    b.type === 'StringValue'
      ? (b.value as string).includes(String(a.value))
      : Array.isArray(b.value)
        ? (b.value as JinjaValue[]).some((item) => same(item, a))
        : b.value instanceof Map && b.value.has(a.value),
}

/**
 * @huggingface/jinja's interpreter where Python's jinja2, the engine transformers renders
 * chat templates with, behaves differently: what `{{ x }}` prints (str(): True, None,
 * 1.0, dict and list reprs), str + non-str as Python's TypeError, string methods with
 * arguments (`strip('\n')`), Python's whitespace, the tojson filter as transformers
 * defines it (json.dumps, floats as Python writes them), the trim, string, select and
 * reject filters and jinja2's tests. Only instances of this class behave so.
 */
export class PythonInterpreter extends Base {
  override evaluateBlock(body: Node[], environment: Environment): JinjaValue {
    let out = ''
    for (const node of body) {
      const result = this.evaluate(node, environment)
      if (statements.has(node.type)) {
        if (result.type === 'StringValue') out += result.value as string
      } else out += pythonStr(result)
    }
    return str(out)
  }

  override evaluateBinaryExpression(node: Node, environment: Environment): JinjaValue {
    const operator = (node.operator as { value: string }).value
    if (operator !== '+' && operator !== '~')
      return super.evaluateBinaryExpression(node, environment)
    const left = this.evaluate(node.left, environment)
    const right = this.evaluate(node.right, environment)
    if (operator === '~') return str(pythonStr(left) + pythonStr(right))
    if (left.type === 'UndefinedValue' || right.type === 'UndefinedValue')
      throw new TemplateRenderError('UndefinedError', 'a variable in an addition is undefined')
    const leftText = left.type === 'StringValue'
    const rightText = right.type === 'StringValue'
    if (leftText && rightText) return str((left.value as string) + (right.value as string))
    if (leftText)
      throw new TemplateRenderError(
        'TypeError',
        `can only concatenate str (not "${pythonTypeName(right)}") to str`,
      )
    if (rightText || left.type === 'NullValue' || right.type === 'NullValue')
      throw new TemplateRenderError(
        'TypeError',
        `unsupported operand type(s) for +: '${pythonTypeName(left)}' and '${pythonTypeName(right)}'`,
      )
    return super.evaluateBinaryExpression(node, environment)
  }

  override evaluateTestExpression(node: Node, environment: Environment): JinjaValue {
    const test = tests[(node.test as { value: string }).value]
    if (test === undefined) return super.evaluateTestExpression(node, environment)
    const result = test(this.evaluate(node.operand, environment))
    return bool(node.negate ? !result : result)
  }

  override applyFilter(operand: JinjaValue, filter: Node, environment: Environment): JinjaValue {
    const call = filter.type === 'CallExpression'
    const name = ((call ? filter.callee : filter) as { value: string }).value
    const [args, kwargs]: Args = call
      ? this.evaluateArguments(filter.args as unknown[], environment)
      : [[], new Map()]
    switch (name) {
      case 'tojson':
        return str(
          pythonJsonDumps(operand, {
            indent: (kwargs.get('indent')?.value as number | string | null | undefined) ?? null,
            separators: separatorsOf(kwargs.get('separators')),
            sortKeys: kwargs.get('sort_keys')?.value === true,
            ensureAscii: kwargs.get('ensure_ascii')?.value === true,
          }),
        )
      case 'trim': {
        const chars = args[0] ?? kwargs.get('chars')
        return str(pyStrip(pythonStr(operand), textOrNull(chars)))
      }
      case 'string':
        return str(pythonStr(operand))
      case 'items':
        return operand.type === 'NullValue' ? new jinja.Array([]) : itemsOf(operand)
      case 'select':
      case 'reject':
        return selectOrReject(operand, args, name === 'select')
      default:
        return super.applyFilter(operand, filter, environment)
    }
  }

  /**
   * `x.name`: jinja2 tries the attribute first, then the item, so a dict's own methods
   * (items, keys, values, get) win over keys of those names, and str has Python's methods.
   */
  override evaluateMemberExpression(node: Node, environment: Environment): JinjaValue {
    const property = node.property as Node
    if (node.computed || property.type !== 'Identifier')
      return super.evaluateMemberExpression(node, environment)
    const name = property.value as string
    const object = this.evaluate(node.object, environment)
    const builtins = (object as unknown as { builtins: Map<string, JinjaValue> }).builtins
    let found: JinjaValue | null | undefined
    if (object.type === 'StringValue') found = stringMethod(object.value as string, name)
    else if (object.type === 'ObjectValue' && name === 'items')
      found = new jinja.Function(() => itemsOf(object))
    else if (object.type === 'ObjectValue' && dictMethods.has(name)) found = builtins.get(name)
    if (!found && (object.type === 'ObjectValue' || object.type === 'NamespaceValue'))
      found = (object.value as Map<string, JinjaValue>).get(name)
    found ??= builtins.get(name)
    return found ?? new jinja.Undefined()
  }
}

const dictMethods = new Set(['items', 'keys', 'values', 'get'])

/** dict.items(): (key, value) tuples. */
function itemsOf(dict: JinjaValue): JinjaValue {
  const entries = dict.value instanceof Map ? [...(dict.value as Map<string, JinjaValue>)] : []
  return new jinja.Array(entries.map(([key, value]) => tuple([str(key), value])))
}

function textOrNull(value: JinjaValue | undefined): string | null {
  return value === undefined || value.type !== 'StringValue' ? null : (value.value as string)
}

function separatorsOf(value: JinjaValue | undefined): [string, string] | null {
  if (value === undefined || !Array.isArray(value.value)) return null
  const [item, key] = value.value as JinjaValue[]
  return [String(item?.value ?? ', '), String(key?.value ?? ': ')]
}

function selectOrReject(operand: JinjaValue, args: JinjaValue[], keep: boolean): JinjaValue {
  const [testName, ...testArgs] = args
  const test: Test =
    testName === undefined ? (v) => v.__bool__().value : (tests[String(testName.value)] ?? missing)
  const items = Array.isArray(operand.value) ? (operand.value as JinjaValue[]) : []
  return new jinja.Array(items.filter((item) => test(item, ...testArgs) === keep))
}

const missing: Test = () => {
  throw new TemplateRenderError('TemplateRuntimeError', 'No test with that name')
}

/** Python's str methods the library lacks or gets wrong (strip with characters, and so on). */
function stringMethod(text: string, name: string): JinjaValue | null {
  const fn = (body: (args: JinjaValue[]) => JinjaValue) =>
    new jinja.Function((args: JinjaValue[]) => body(args))
  const chars = (args: JinjaValue[]) => textOrNull(args[0])
  switch (name) {
    case 'strip':
      return fn((args) => str(pyStrip(text, chars(args))))
    case 'lstrip':
      return fn((args) => str(pyStrip(text, chars(args), 'left')))
    case 'rstrip':
      return fn((args) => str(pyStrip(text, chars(args), 'right')))
    case 'split':
      return fn(
        (args) =>
          new jinja.Array(
            pySplit(text, textOrNull(args[0]), Number(args[1]?.value ?? -1)).map((part) =>
              str(part),
            ),
          ),
      )
    case 'capitalize':
      return fn(() => str(text.charAt(0).toUpperCase() + text.slice(1).toLowerCase()))
    case 'isspace':
      return fn(() => bool(text.length > 0 && [...text].every(isPythonSpace)))
    default:
      return null
  }
}
