import type { OpenApiSchema } from './to-structural-schema.ts'

const junctors = ['allOf', 'anyOf', 'oneOf', 'not'] as const
const types = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean'])

/**
 * The API server's structural-schema rules (apiextensions.k8s.io/v1), checked on a
 * schema, returning every violation with its path. Written from the Kubernetes
 * documentation, independently of the generator it checks.
 */
export function checkStructural(root: OpenApiSchema): string[] {
  const problems: string[] = []
  visit(root, '', problems, true)
  return problems
}

function visit(node: OpenApiSchema, path: string, problems: string[], isRoot: boolean): void {
  const at = path || '<root>'
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true
  const intOrString = node['x-kubernetes-int-or-string'] === true
  if (!types.has(node.type as string) && !preserve && !intOrString) {
    problems.push(`${at}: missing or invalid type ${JSON.stringify(node.type)}`)
  }
  if ('$ref' in node) problems.push(`${at}: $ref is not allowed`)
  for (const junctor of junctors) {
    if (junctor in node && !intOrString) problems.push(`${at}: ${junctor} is not structural here`)
  }
  if (node.properties !== undefined && node.additionalProperties !== undefined) {
    problems.push(`${at}: properties and additionalProperties are mutually exclusive`)
  }
  if (node.additionalProperties === false) problems.push(`${at}: additionalProperties: false`)
  if (Array.isArray(node.enum)) checkEnum(node, at, problems)
  if (node.type === 'array') checkArray(node, path, problems)
  const properties = node.properties as Record<string, OpenApiSchema> | undefined
  if (properties !== undefined) {
    if (node.type !== 'object' && !preserve) problems.push(`${at}: properties on a non-object`)
    const required = (node.required as string[] | undefined) ?? []
    for (const name of required) {
      if (!(name in properties)) problems.push(`${at}: required field ${name} is not a property`)
    }
    for (const [name, child] of Object.entries(properties)) {
      if (isRoot && name === 'metadata') {
        checkMetadata(child, problems)
        continue
      }
      visit(child, `${path}.${name}`, problems, false)
    }
  }
  if (typeof node.additionalProperties === 'object' && node.additionalProperties !== null) {
    visit(node.additionalProperties as OpenApiSchema, `${path}.*`, problems, false)
  }
}

function checkArray(node: OpenApiSchema, path: string, problems: string[]): void {
  const items = node.items as OpenApiSchema | undefined
  if (items === undefined) {
    problems.push(`${path}: array without items`)
    return
  }
  visit(items, `${path}[]`, problems, false)
  const listType = node['x-kubernetes-list-type']
  if (listType === undefined) return
  if (!['atomic', 'set', 'map'].includes(listType as string)) {
    problems.push(`${path}: unknown x-kubernetes-list-type ${String(listType)}`)
  }
  if (listType !== 'map') return
  const keys = node['x-kubernetes-list-map-keys'] as string[] | undefined
  if (items.type !== 'object' || !Array.isArray(keys) || keys.length === 0) {
    problems.push(`${path}: list-type map needs object items and x-kubernetes-list-map-keys`)
    return
  }
  const itemProperties = (items.properties ?? {}) as Record<string, OpenApiSchema>
  const required = (items.required as string[] | undefined) ?? []
  for (const key of keys) {
    const keySchema = itemProperties[key]
    if (keySchema === undefined) problems.push(`${path}: map key ${key} is not a property`)
    else if (!['string', 'integer', 'boolean'].includes(keySchema.type as string)) {
      problems.push(`${path}: map key ${key} must be a scalar`)
    } else if (!required.includes(key) && keySchema.default === undefined) {
      problems.push(`${path}: map key ${key} must be required or defaulted`)
    }
  }
}

function checkEnum(node: OpenApiSchema, at: string, problems: string[]): void {
  const expected = node.type === 'integer' || node.type === 'number' ? 'number' : node.type
  for (const value of node.enum as unknown[]) {
    if (typeof value !== expected)
      problems.push(`${at}: enum value ${JSON.stringify(value)} is not ${String(node.type)}`)
  }
}

function checkMetadata(node: OpenApiSchema, problems: string[]): void {
  if (node.type !== 'object') problems.push('.metadata: must be type object')
  const properties = (node.properties ?? {}) as Record<string, unknown>
  for (const name of Object.keys(properties)) {
    if (name !== 'name' && name !== 'generateName') {
      problems.push(`.metadata.${name}: only name and generateName may be restricted`)
    }
  }
  for (const keyword of Object.keys(node)) {
    if (!['type', 'properties', 'description'].includes(keyword)) {
      problems.push(`.metadata: ${keyword} is not allowed`)
    }
  }
}
