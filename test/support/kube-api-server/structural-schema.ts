import { badRequest } from './kube-error.ts'
import { isRecord, type KubeObject } from './kube-object.ts'
import { setOwn } from './merge-patch.ts'
import type { ResourceType } from './resource-registry.ts'

type Schema = Record<string, unknown>

const embeddedFields = new Set(['apiVersion', 'kind', 'metadata'])

/**
 * What the API server does to a custom resource with its structural schema: fields the
 * schema does not declare are pruned (unless x-kubernetes-preserve-unknown-fields), null
 * non-nullable fields dropped, then defaults applied. Mutates the object; returns the
 * pruned fields' paths (`spec.foo`), which fieldValidation=Strict turns into a 400.
 * apiVersion, kind and metadata are left alone.
 */
export function applyStructuralSchema(schema: Schema, object: KubeObject): string[] {
  const unknown: string[] = []
  const body: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(object)) {
    if (!embeddedFields.has(key)) setOwn(body, key, value)
  }
  walk(schema, body, '', unknown)
  for (const key of Object.keys(object)) if (!embeddedFields.has(key)) delete object[key]
  Object.assign(object, body)
  return unknown
}

function walk(schema: Schema, value: unknown, path: string, unknown: string[]): void {
  if (Array.isArray(value)) {
    const items = schema.items
    if (!isRecord(items)) return
    for (const [i, item] of value.entries()) walk(items, item, `${path}[${i}]`, unknown)
    return
  }
  if (!isRecord(value)) return
  const properties = isRecord(schema.properties) ? schema.properties : {}
  const additional = schema.additionalProperties
  const keepUnknown = schema['x-kubernetes-preserve-unknown-fields'] === true || additional === true
  const embedded = schema['x-kubernetes-embedded-resource'] === true
  for (const key of Object.keys(value)) {
    const child = Object.hasOwn(properties, key) ? properties[key] : additional
    const childPath = path ? `${path}.${key}` : key
    if (isRecord(child)) {
      if (value[key] === null && child.nullable !== true) delete value[key]
      else walk(child, value[key], childPath, unknown)
    } else if (!keepUnknown && !(embedded && embeddedFields.has(key))) {
      unknown.push(childPath)
      delete value[key]
    }
  }
  for (const [key, child] of Object.entries(properties)) {
    if (value[key] !== undefined || !isRecord(child) || child.default === undefined) continue
    setOwn(value, key, structuredClone(child.default))
    walk(child, value[key], path ? `${path}.${key}` : key, unknown)
  }
}

/**
 * The schema applied under a fieldValidation mode: unknown fields are pruned in any case;
 * Strict rejects them (400, as the real server words it), Warn reports them.
 */
export function enforceSchema(
  type: ResourceType,
  object: KubeObject,
  mode: 'Ignore' | 'Warn' | 'Strict',
  warnings: string[],
): void {
  if (!type.schema) return
  const unknown = applyStructuralSchema(type.schema, object).map((f) => `unknown field "${f}"`)
  if (unknown.length === 0 || mode === 'Ignore') return
  if (mode === 'Warn') {
    warnings.push(...unknown)
    return
  }
  const kind = `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}`
  throw badRequest(`${kind}: strict decoding error: ${unknown.join(', ')}`)
}
