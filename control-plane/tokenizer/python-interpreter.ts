import { type Environment, Interpreter } from '@huggingface/jinja'
import { dumpJson } from './python-json.ts'
import { pythonStringMethods, pythonStrip } from './python-string-methods.ts'
import {
  bool,
  fn,
  int,
  list,
  pairs,
  pyEquals,
  pyLength,
  pyStr,
  pyTypeName,
  str,
  undefinedValue,
  type Value,
} from './template-values.ts'

/** A template's AST node, as `@huggingface/jinja` builds it (its types are not exported). */
type Node = { type: string; [key: string]: unknown }
type Env = Environment

/** The interpreter's own methods this file wraps (TypeScript-private in its declarations). */
interface Internals {
  evaluate(node: Node | undefined, env: Env): Value
  evaluateArguments(args: Node[], env: Env): [Value[], Map<string, Value>]
  applyFilter(operand: Value, filter: Node, env: Env): Value
  evaluateTestExpression(node: Node, env: Env): Value
  evaluateBinaryExpression(node: Node, env: Env): Value
  evaluateMemberExpression(node: Node, env: Env): Value
  evaluateBlock(statements: Node[], env: Env): Value
  evaluateIdentifier(node: Node, env: Env): Value
}

/** An environment's own variables and its parent (public fields of the package's class). */
type Scope = { variables: Map<string, Value>; parent?: Scope }

/** Statements print what they render; any other node is an expression `{{ }}` prints. */
const statementTypes = new Set(['Set', 'Macro', 'Comment', 'Break', 'Continue'])

const isSequence = (value: Value) => value.type === 'ArrayValue' || value.type === 'TupleValue'
const isNumber = (value: Value) =>
  value.type === 'IntegerValue' || value.type === 'FloatValue' || value.type === 'BooleanValue'

/** Jinja2's tests with Python's meaning (`@huggingface/jinja` counts no dict as iterable, ...). */
const tests: Record<string, (value: Value) => boolean> = {
  defined: (v) => v.type !== 'UndefinedValue',
  undefined: (v) => v.type === 'UndefinedValue',
  none: (v) => v.type === 'NullValue',
  boolean: (v) => v.type === 'BooleanValue',
  true: (v) => v.type === 'BooleanValue' && v.value === true,
  false: (v) => v.type === 'BooleanValue' && v.value === false,
  string: (v) => v.type === 'StringValue',
  number: isNumber,
  integer: (v) => v.type === 'IntegerValue',
  float: (v) => v.type === 'FloatValue',
  mapping: (v) => v.type === 'ObjectValue' || v.type === 'KeywordArgumentsValue',
  iterable: (v) =>
    ['StringValue', 'ArrayValue', 'TupleValue', 'ObjectValue', 'UndefinedValue'].includes(v.type),
  sequence: (v) => ['StringValue', 'ArrayValue', 'TupleValue', 'ObjectValue'].includes(v.type),
  callable: (v) => v.type === 'FunctionValue',
}

function membership(item: Value, container: Value): boolean {
  if (container.type === 'StringValue') {
    if (item.type !== 'StringValue')
      throw new TypeError(`'in <string>' requires string as left operand, not ${pyTypeName(item)}`)
    return (container.value as string).includes(item.value as string)
  }
  if (isSequence(container)) return (container.value as Value[]).some((x) => pyEquals(item, x))
  if (container.type === 'ObjectValue')
    return (
      item.type === 'StringValue' &&
      (container.value as Map<string, Value>).has(item.value as string)
    )
  if (container.type === 'UndefinedValue') return false
  throw new TypeError(`argument of type '${pyTypeName(container)}' is not iterable`)
}

/** Python's `+`: numbers add, strings and lists concatenate, anything else is a TypeError. */
function add(left: Value, right: Value): Value | null {
  if (left.type === 'StringValue' && right.type === 'StringValue')
    return str((left.value as string) + (right.value as string))
  if (isSequence(left) && left.type === right.type)
    return list([...(left.value as Value[]), ...(right.value as Value[])])
  if (isNumber(left) && isNumber(right)) return null
  if (left.type === 'StringValue')
    throw new TypeError(`can only concatenate str (not "${pyTypeName(right)}") to str`)
  throw new TypeError(
    `unsupported operand type(s) for +: '${pyTypeName(left)}' and '${pyTypeName(right)}'`,
  )
}

function compare(op: string, left: Value, right: Value): boolean | null {
  if (left.type !== 'StringValue' || right.type !== 'StringValue') return null
  const [a, b] = [left.value as string, right.value as string]
  if (op === '<') return a < b
  if (op === '>') return a > b
  if (op === '<=') return a <= b
  return a >= b
}

/**
 * An interpreter for `@huggingface/jinja` templates that computes what Python's jinja2
 * (as transformers sets it up) computes where the package does not: `{{ }}` prints
 * Python's str() (True, None, 1.0, ['a']), `+` refuses mixed types, `==` and `in` compare
 * by value, tests have Python's meaning, `x.items()` is the dict method even when the dict
 * has an "items" key, str methods are Python's, and the filters `tojson` (transformers'
 * json.dumps), `trim`, `string`, `join`, `length`, `items`, `select` and `reject`.
 * Attribute access on an undefined value is an error, as jinja2's Undefined makes it.
 */
export function createPythonInterpreter(env: Env): Interpreter {
  const interpreter = new Interpreter(env)
  const self = interpreter as unknown as Internals
  const base = Interpreter.prototype as unknown as Internals

  // The package finds a variable by throwing past every scope when it is not defined, which
  // templates ask often (`enable_thinking is defined`); a plain walk gives the same answer.
  self.evaluateIdentifier = (node, scope) => {
    const name = node.value as string
    for (let at: Scope | undefined = scope as unknown as Scope; at; at = at.parent) {
      const value = at.variables.get(name)
      if (value !== undefined) return value
    }
    return undefinedValue()
  }

  self.evaluateBlock = (statements, scope) => {
    let out = ''
    for (const statement of statements) {
      const value = self.evaluate(statement, scope)
      if (!statementTypes.has(statement.type)) out += pyStr(value)
    }
    return str(out)
  }

  self.evaluateBinaryExpression = (node, scope) => {
    const op = (node.operator as { value: string }).value
    if (op === 'and' || op === 'or') return base.evaluateBinaryExpression.call(self, node, scope)
    const left = self.evaluate(node.left as Node, scope)
    const right = self.evaluate(node.right as Node, scope)
    if (op === '==') return bool(pyEquals(left, right))
    if (op === '!=') return bool(!pyEquals(left, right))
    if (op === 'in') return bool(membership(left, right))
    if (op === 'not in') return bool(!membership(left, right))
    if (op === '~') return str(pyStr(left) + pyStr(right))
    if (op === '+') {
      const sum = add(left, right)
      if (sum !== null) return sum
    }
    if (op === '*') {
      const [text, times] = left.type === 'StringValue' ? [left, right] : [right, left]
      if (text.type === 'StringValue' && times.type === 'IntegerValue')
        return str((text.value as string).repeat(Math.max(0, times.value as number)))
    }
    if (['<', '>', '<=', '>='].includes(op)) {
      const compared = compare(op, left, right)
      if (compared !== null) return bool(compared)
    }
    // Numbers, and what Python refuses too: the package's arithmetic on the evaluated sides.
    const literal = (value: Value) => ({ type: 'Evaluated', value })
    const evaluated = { ...node, left: literal(left), right: literal(right) }
    return base.evaluateBinaryExpression.call(self, evaluated as Node, scope)
  }

  const baseEvaluate = self.evaluate.bind(self)
  self.evaluate = (node, scope) =>
    node?.type === 'Evaluated' ? (node.value as Value) : baseEvaluate(node, scope)

  self.evaluateTestExpression = (node, scope) => {
    const test = tests[(node.test as { value: string }).value]
    if (test === undefined) return base.evaluateTestExpression.call(self, node, scope)
    const result = test(self.evaluate(node.operand as Node, scope))
    return bool(node.negate ? !result : result)
  }

  self.evaluateMemberExpression = (node, scope) => {
    const object = self.evaluate(node.object as Node, scope)
    const property = node.property as Node
    if (object.type === 'UndefinedValue') {
      const name = node.computed ? pyStr(self.evaluate(property, scope)) : String(property.value)
      throw new Error(`'${name}' is undefined: the object it is read from is undefined`)
    }
    if (!node.computed && property.type === 'Identifier') {
      const name = property.value as string
      const method = pythonStringMethods.get(name)
      if (object.type === 'StringValue' && method !== undefined)
        return fn((args) => method(object.value as string, args))
      if (object.type === 'ObjectValue' && ['items', 'keys', 'values', 'get'].includes(name))
        return object.builtins.get(name) as Value
    }
    return base.evaluateMemberExpression.call(
      self,
      { ...node, object: { type: 'Evaluated', value: object } } as Node,
      scope,
    )
  }

  self.applyFilter = (operand, filter, scope) => {
    const named = filter.type === 'Identifier' ? (filter.value as string) : null
    const called =
      filter.type === 'CallExpression' && (filter.callee as Node).type === 'Identifier'
        ? ((filter.callee as Node).value as string)
        : null
    const name = named ?? called
    const [args, kwargs] =
      called === null
        ? [[], new Map<string, Value>()]
        : self.evaluateArguments(filter.args as Node[], scope)
    const arg = (index: number, key: string) => args[index] ?? kwargs.get(key)
    switch (name) {
      case 'tojson':
        return str(dumpJson(operand, jsonOptions(arg)))
      case 'string':
        return str(pyStr(operand))
      case 'trim': {
        const chars = arg(0, 'chars')
        return str(
          pythonStrip(
            pyStr(operand),
            chars === undefined || chars.type === 'NullValue' ? null : pyStr(chars),
            true,
            true,
          ),
        )
      }
      case 'length':
      case 'count': {
        const length = pyLength(operand)
        if (length === null)
          throw new TypeError(`object of type '${pyTypeName(operand)}' has no len()`)
        return int(length)
      }
      case 'join': {
        const separator = arg(0, 'd')
        const items =
          operand.type === 'StringValue'
            ? [...(operand.value as string)]
            : iterate(operand).map(pyStr)
        return str(items.join(separator === undefined ? '' : pyStr(separator)))
      }
      case 'default':
      case 'd': {
        const fallback = arg(0, 'default_value') ?? str('')
        const empty = arg(1, 'boolean')?.value === true && !operand.__bool__().value
        return operand.type === 'UndefinedValue' || empty ? fallback : operand
      }
      case 'upper':
      case 'lower':
      case 'title':
      case 'capitalize':
        if (operand.type !== 'StringValue') break
        return (pythonStringMethods.get(name) as (self: string, a: Value[]) => Value)(
          operand.value as string,
          [],
        )
      case 'items':
        if (operand.type === 'UndefinedValue') return list([])
        if (operand.type !== 'ObjectValue')
          throw new TypeError(`can only get item pairs from a mapping`)
        return pairs(operand.value as Map<string, Value>)
      case 'select':
      case 'reject':
        return list(selectItems(operand, args, name === 'select'))
    }
    return base.applyFilter.call(self, operand, filter, scope)
  }
  return interpreter
}

function iterate(value: Value): Value[] {
  if (isSequence(value)) return value.value as Value[]
  if (value.type === 'ObjectValue') return [...(value.value as Map<string, Value>).keys()].map(str)
  if (value.type === 'StringValue') return [...(value.value as string)].map(str)
  if (value.type === 'UndefinedValue') return []
  throw new TypeError(`'${pyTypeName(value)}' object is not iterable`)
}

function selectItems(operand: Value, args: Value[], keep: boolean): Value[] {
  const [testName, ...testArgs] = args
  const test = (item: Value): boolean => {
    if (testName === undefined) return item.__bool__().value
    const name = pyStr(testName)
    const other = testArgs[0]
    if ((name === 'equalto' || name === 'eq' || name === '==') && other !== undefined)
      return pyEquals(item, other)
    if ((name === 'ne' || name === '!=') && other !== undefined) return !pyEquals(item, other)
    if (name === 'in' && other !== undefined) return membership(item, other)
    const known = tests[name]
    if (known === undefined) throw new Error(`no test named '${name}'`)
    return known(item)
  }
  return iterate(operand).filter((item) => test(item) === keep)
}

function jsonOptions(arg: (index: number, key: string) => Value | undefined) {
  const indent = arg(1, 'indent')
  const separators = arg(2, 'separators')
  return {
    ensureAscii: arg(0, 'ensure_ascii')?.value === true,
    indent:
      indent === undefined || indent.type === 'NullValue'
        ? null
        : indent.type === 'StringValue'
          ? (indent.value as string)
          : Number(indent.value),
    separators:
      separators !== undefined && isSequence(separators)
        ? ((separators.value as Value[]).map(pyStr) as [string, string])
        : null,
    sortKeys: arg(3, 'sort_keys')?.value === true,
  }
}
