import { z } from 'zod'

/** An OpenAPI v3 schema node as Kubernetes stores it in a CRD. */
export type OpenApiSchema = { [keyword: string]: unknown }

/** Formats the API server knows; zod's own (starts_with, regex, ...) are dropped. */
const kubernetesFormats = new Set([
  'date-time',
  'date',
  'duration',
  'byte',
  'int32',
  'int64',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
])

const unions = ['anyOf', 'oneOf', 'allOf', 'not'] as const

/**
 * Turns a zod schema into a structural OpenAPI v3 schema: every node typed, no refs, no
 * unions, unknown fields pruned. zod's JSON Schema output does most of it; this removes
 * what Kubernetes rejects and refuses what it cannot express, so a schema that needs a
 * union is redesigned as a Kubernetes-style tagged object instead.
 */
export function toStructuralSchema(schema: z.ZodType): OpenApiSchema {
  const jsonSchema = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'throw',
    reused: 'inline',
    cycles: 'throw',
  }) as OpenApiSchema
  return normalize(jsonSchema, '')
}

function normalize(node: OpenApiSchema, path: string): OpenApiSchema {
  for (const keyword of unions) {
    if (keyword in node) {
      throw new Error(
        `${path || '<root>'}: ${keyword} cannot be expressed in a structural CRD schema`,
      )
    }
  }
  if ('$ref' in node) throw new Error(`${path || '<root>'}: $ref is not allowed in a CRD schema`)
  const out: OpenApiSchema = {}
  for (const [keyword, value] of Object.entries(node)) {
    switch (keyword) {
      case '$schema':
      case 'id':
      case 'propertyNames':
        break
      case 'const':
        out.enum = [value]
        break
      case 'format':
        if (typeof value === 'string' && kubernetesFormats.has(value)) out.format = value
        break
      case 'properties':
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, OpenApiSchema>).map(([name, child]) => [
            name,
            normalize(child, `${path}.${name}`),
          ]),
        )
        break
      case 'items':
        out.items = normalize(value as OpenApiSchema, `${path}[]`)
        break
      case 'additionalProperties':
        if (value === false) break
        if (node.properties !== undefined) {
          // A loose object: known fields are typed, the rest is kept as it is.
          out['x-kubernetes-preserve-unknown-fields'] = true
          break
        }
        out.additionalProperties = normalize(value as OpenApiSchema, `${path}.*`)
        break
      default:
        out[keyword] = value
    }
  }
  if (out.format === 'date-time') delete out.pattern
  if (out.type === 'integer') {
    if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum
    if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum
  }
  if (out.type === undefined) throw new Error(`${path || '<root>'}: every node needs a type`)
  return out
}
