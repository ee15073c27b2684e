import { evaluate } from '@marcbachmann/cel-js'
import { Ajv } from 'ajv'
import type { OpenApiSchema } from '../../shared/crd/openapi/to-structural-schema.ts'

type Node = OpenApiSchema & {
  properties?: Record<string, Node>
  items?: Node
  additionalProperties?: Node
}

/**
 * Validates an object the way the API server would with a CRD's schema, independently of
 * zod: defaults applied, then the OpenAPI schema (with unknown fields rejected, as
 * `kubectl --validate=strict` does) via ajv, then every x-kubernetes-validations CEL rule and list-map key uniqueness.
 */
export function crdValidator(openApiSchema: OpenApiSchema): (value: unknown) => string[] {
  const schema = openApiSchema as Node
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
  const validate = ajv.compile(toJsonSchema(schema))
  return (value) => {
    const candidate = structuredClone(value)
    applyDefaults(schema, candidate)
    const errors = validate(candidate)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
    checkCel(schema, candidate, '', errors)
    return errors
  }
}

/** OpenAPI 3.0 spellings ajv does not take, and pruning turned into rejection. */
function toJsonSchema(node: Node): object {
  const out: Record<string, unknown> = {}
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword.startsWith('x-kubernetes-')) continue
    if (keyword === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Node>).map(([k, v]) => [k, toJsonSchema(v)]),
      )
    } else if (keyword === 'items' || keyword === 'additionalProperties') {
      out[keyword] = toJsonSchema(value as Node)
    } else out[keyword] = value
  }
  if (node.exclusiveMinimum === true) {
    out.exclusiveMinimum = node.minimum
    delete out.minimum
  }
  if (node.exclusiveMaximum === true) {
    out.exclusiveMaximum = node.maximum
    delete out.maximum
  }
  if (node.properties && node['x-kubernetes-preserve-unknown-fields'] !== true)
    out.additionalProperties = false
  return out
}

function applyDefaults(node: Node, value: unknown): void {
  if (Array.isArray(value)) {
    if (node.items) for (const item of value) applyDefaults(node.items, item)
    return
  }
  if (typeof value !== 'object' || value === null) return
  const record = value as Record<string, unknown>
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    if (record[name] === undefined && child.default !== undefined)
      record[name] = structuredClone(child.default)
    applyDefaults(child, record[name])
  }
}

function checkCel(node: Node, value: unknown, path: string, errors: string[]): void {
  if (value === undefined || value === null) return
  for (const { rule, message } of (node['x-kubernetes-validations'] as {
    rule: string
    message: string
  }[]) ?? []) {
    try {
      if (evaluate(rule, { self: value }) !== true) errors.push(`${path} ${message}`)
    } catch (error) {
      errors.push(`${path} CEL error in ${rule}: ${(error as Error).message}`)
    }
  }
  if (Array.isArray(value) && node['x-kubernetes-list-type'] === 'map') {
    // The API server rejects two items with the same map keys.
    const keys = node['x-kubernetes-list-map-keys'] as string[]
    const seen = new Set(
      value.map((item) =>
        JSON.stringify(keys.map((key) => (item as Record<string, unknown>)[key])),
      ),
    )
    if (seen.size !== value.length)
      errors.push(`${path} duplicate entries for list-map keys ${keys.join(', ')}`)
  }
  if (Array.isArray(value) && node.items) {
    for (const [i, item] of value.entries()) checkCel(node.items, item, `${path}[${i}]`, errors)
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      checkCel(child, (value as Record<string, unknown>)[name], `${path}.${name}`, errors)
    }
  }
}
