import { isRecord } from './kube-object.ts'

type Step = (value: unknown) => unknown[]

/**
 * The JSONPath subset printer columns use: `.a.b`, `[0]`, `[*]`, `['key']` and filters
 * `[?(@.type=="Ready")]` (== or !=). Returns every match, in document order; a path it
 * cannot parse matches nothing, like a column the real server leaves empty.
 */
export function evaluateJsonPath(path: string, document: unknown): unknown[] {
  const steps = parsePath(path.trim().replace(/^\{(.*)\}$/s, '$1'))
  if (!steps) return []
  let values: unknown[] = [document]
  for (const step of steps) values = values.flatMap(step)
  return values
}

const fieldStep = /^\.([A-Za-z0-9_-]+)/
const indexStep = /^\[(\*|-?[0-9]+)\]/
const quotedStep = /^\[(?:'([^']*)'|"([^"]*)")\]/
const filterStep =
  /^\[\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?[0-9.]+|true|false))\s*\)\]/

const stepForms: [RegExp, (m: RegExpExecArray) => Step][] = [
  [fieldStep, (m) => field(m[1] ?? '')],
  [quotedStep, (m) => field(m[1] ?? m[2] ?? '')],
  [indexStep, (m) => index(m[1] ?? '*')],
  [
    filterStep,
    ([, fieldPath = '', op, dq, sq, literal]) =>
      filter(fieldPath.slice(1).split('.'), op === '!=', dq ?? sq ?? literal ?? ''),
  ],
]

function parsePath(path: string): Step[] | undefined {
  const steps: Step[] = []
  let rest = path.startsWith('$') ? path.slice(1) : path
  while (rest !== '') {
    const next = nextStep(rest)
    if (!next) return undefined
    steps.push(next.step)
    rest = rest.slice(next.length)
  }
  return steps
}

function nextStep(rest: string): { step: Step; length: number } | undefined {
  for (const [form, build] of stepForms) {
    const m = form.exec(rest)
    if (m) return { step: build(m), length: m[0].length }
  }
  return undefined
}

function field(name: string): Step {
  return (value) => (isRecord(value) && value[name] !== undefined ? [value[name]] : [])
}

function index(token: string): Step {
  return (value) => {
    if (!Array.isArray(value)) return []
    if (token === '*') return value
    const i = Number(token)
    const item = value[i < 0 ? value.length + i : i]
    return item === undefined ? [] : [item]
  }
}

function filter(fieldPath: string[], negate: boolean, wanted: string): Step {
  return (value) => {
    if (!Array.isArray(value)) return []
    return value.filter((item) => {
      let node: unknown = item
      for (const name of fieldPath) node = isRecord(node) ? node[name] : undefined
      const equal = node !== undefined && String(node) === wanted
      return negate ? !equal : equal
    })
  }
}
