import { badRequest } from './kube-error.ts'
import type { KubeObject } from './kube-object.ts'

export type ObjectMatcher = (object: KubeObject) => boolean

type LabelTest = (labels: Record<string, string>) => boolean

const key = `[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?`
const value = `(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?`
const existsForm = new RegExp(`^(${key})$`)
const missingForm = new RegExp(`^!\\s*(${key})$`)
const equalityForm = new RegExp(`^(${key})\\s*(==|=|!=)\\s*(${value})$`)
const setForm = new RegExp(`^(${key})\\s+(in|notin)\\s*\\(([^()]*)\\)$`)
const numericForm = new RegExp(`^(${key})\\s*(<|>)\\s*(-?[0-9]+)$`)

/** The `labelSelector` and `fieldSelector` query parameters as one predicate. */
export function objectSelector(query: URLSearchParams): ObjectMatcher {
  const labels = parseLabelSelector(query.get('labelSelector') ?? '')
  const fields = parseFieldSelector(query.get('fieldSelector') ?? '')
  return (object) => labels(object) && fields(object)
}

/** Kubernetes label selector syntax: `a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`. */
export function parseLabelSelector(selector: string): ObjectMatcher {
  const tests = splitRequirements(selector).map(parseRequirement)
  return (object) => {
    const labels = object.metadata.labels ?? {}
    return tests.every((test) => test(labels))
  }
}

function splitRequirements(selector: string): string[] {
  if (selector.trim() === '') return []
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const char of selector) {
    if (char === '(') depth += 1
    if (char === ')') depth -= 1
    if (char === ',' && depth === 0) {
      parts.push(current)
      current = ''
    } else current += char
  }
  parts.push(current)
  return parts.map((p) => p.trim())
}

/** Far above any valid key and values; keeps the regular expressions' work bounded. */
const longestRequirement = 4096

function parseRequirement(requirement: string): LabelTest {
  if (requirement.length > longestRequirement) {
    throw badRequest('unable to parse requirement: too long')
  }
  let m = existsForm.exec(requirement)
  if (m) return (labels) => Object.hasOwn(labels, m?.[1] ?? '')
  m = missingForm.exec(requirement)
  if (m) return (labels) => !Object.hasOwn(labels, m?.[1] ?? '')
  m = equalityForm.exec(requirement)
  if (m) {
    const [, name = '', op, wanted = ''] = m
    if (op === '!=') return (labels) => labels[name] !== wanted || !Object.hasOwn(labels, name)
    return (labels) => Object.hasOwn(labels, name) && labels[name] === wanted
  }
  m = setForm.exec(requirement)
  if (m) {
    const [, name = '', op, list = ''] = m
    const values = list.split(',').map((v) => v.trim())
    const has = (labels: Record<string, string>) =>
      Object.hasOwn(labels, name) && values.includes(labels[name] ?? '')
    return op === 'in' ? has : (labels) => !has(labels)
  }
  m = numericForm.exec(requirement)
  if (m) {
    const [, name = '', op, bound = '0'] = m
    return (labels) => {
      const label = Number.parseInt(labels[name] ?? '', 10)
      if (Number.isNaN(label)) return false
      return op === '<' ? label < Number(bound) : label > Number(bound)
    }
  }
  throw badRequest(`unable to parse requirement: invalid label selector "${requirement}"`)
}

const selectableFields: Record<string, (object: KubeObject) => string> = {
  'metadata.name': (object) => object.metadata.name ?? '',
  'metadata.namespace': (object) => object.metadata.namespace ?? '',
}

/** Only the fields every resource supports: `metadata.name` and `metadata.namespace`. */
export function parseFieldSelector(selector: string): ObjectMatcher {
  if (selector.trim() === '') return () => true
  const tests = selector.split(',').map((term) => {
    const m = /^\s*([A-Za-z0-9.]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term)
    if (!m) throw badRequest(`invalid field selector: "${term}"`)
    const [, field = '', op, wanted = ''] = m
    const read = selectableFields[field]
    if (!read) throw badRequest(`field label not supported: ${field}`)
    return (object: KubeObject) => (read(object) === wanted) === (op !== '!=')
  })
  return (object) => tests.every((test) => test(object))
}
