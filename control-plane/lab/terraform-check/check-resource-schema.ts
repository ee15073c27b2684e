import { builtInProvider, providerOfType } from './check-versions.ts'
import type { TerraformModule, TypedDeclared } from './load-terraform-module.ts'
import {
  type ProviderSchema,
  type ProviderSchemas,
  type SchemaBlock,
  settableNames,
} from './provider-schema.ts'
import { type BlockBody, nestedBodies } from './terraform-body.ts'
import type { TerraformFinding } from './terraform-finding.ts'

const resourceMeta = new Set([
  'count',
  'for_each',
  'provider',
  'depends_on',
  'lifecycle',
  'provisioner',
  'connection',
])
const dataMeta = new Set(['count', 'for_each', 'provider', 'depends_on', 'lifecycle'])

/** terraform_data, the one resource of Terraform's built-in provider (Terraform 1.4+). */
const builtIn: ProviderSchema = {
  provider: 'terraform.io/builtin/terraform',
  version: 'built in',
  source: 'the terraform_data documentation',
  resources: {
    terraform_data: { optional: ['input', 'triggers_replace'], readOnly: ['id', 'output'] },
  },
  dataSources: {},
}

/**
 * Resource and data source arguments and nested blocks exist in the committed schema
 * snapshot of the provider (infra/terraform/schema), required ones are set, computed-only
 * ones are not. Types and values are not checked: that needs the provider itself.
 */
export function checkResourceSchemas(
  module: TerraformModule,
  schemas: ProviderSchemas,
): TerraformFinding[] {
  return [
    ...[...module.resources.values()].flatMap((d) => declaredFindings(d, 'resource', schemas)),
    ...[...module.dataSources.values()].flatMap((d) => declaredFindings(d, 'data', schemas)),
  ]
}

function declaredFindings(
  declared: TypedDeclared,
  kind: 'resource' | 'data',
  schemas: ProviderSchemas,
): TerraformFinding[] {
  const provider = providerOfType(declared.type)
  const schema = provider === builtInProvider ? builtIn : schemas.get(provider)
  const at = (message: string) => [{ file: declared.file.path, line: declared.line, message }]
  const what = `${kind === 'data' ? 'data source' : 'resource'} type ${declared.type}`
  if (!schema)
    return at(
      `${what}: no schema snapshot for provider ${provider} (infra/terraform/schema/${provider}.json)`,
    )
  const block = (kind === 'data' ? schema.dataSources : schema.resources)[declared.type]
  if (!block)
    return at(`${what} is not in the schema snapshot of ${schema.provider} ${schema.version}`)
  const label = `${kind === 'data' ? 'data.' : ''}${declared.type}.${declared.name}`
  const context = { declared, label, version: `${schema.provider} ${schema.version}` }
  return blockFindings(declared.body, block, kind === 'data' ? dataMeta : resourceMeta, context)
}

interface Context {
  declared: TypedDeclared
  label: string
  version: string
}

/** Checks one body against its schema; `prefix` names where it is (`statement.`, `bindings.`). */
function blockFindings(
  body: BlockBody,
  block: SchemaBlock,
  meta: ReadonlySet<string>,
  context: Context,
  prefix = '',
): TerraformFinding[] {
  const { declared, label } = context
  const findings: TerraformFinding[] = []
  const add = (key: string, message: string) =>
    findings.push({
      file: declared.file.path,
      line: declared.file.locator.keyLine(declared.line, key),
      message: `${label}: ${message}`,
    })
  const inside = (inner: SchemaBlock, bodies: BlockBody[], name: string) => {
    for (const one of bodies)
      findings.push(...blockFindings(one, inner, new Set(), context, `${prefix}${name}.`))
  }
  const settable = settableNames(block)
  const dynamic = dynamicBlocks(body)
  for (const [key, value] of Object.entries(body)) {
    if (meta.has(key) || key === 'dynamic') continue
    const inner = block.blocks?.[key] ?? block.nested?.[key]
    if (inner) inside(inner, objectsIn(value), key)
    else if (block.readOnly?.includes(key))
      add(key, `${prefix}${key} is read-only (the provider computes it)`)
    else if (!settable.has(key))
      add(key, `unknown argument ${prefix}${key} (not in ${context.version})`)
  }
  for (const [name, contents] of dynamic) {
    const inner = block.blocks?.[name]
    if (inner) inside(inner, contents, name)
    else
      add(name, `unknown block ${prefix}${name} in dynamic "${name}" (not in ${context.version})`)
  }
  for (const name of block.required ?? []) {
    if (!(name in body) && !dynamic.has(name))
      add(name, `missing required argument ${prefix}${name}`)
  }
  return findings
}

/** Object literals in a nested block or attribute's value; an expression has none to check. */
function objectsIn(value: unknown): BlockBody[] {
  if (Array.isArray(value)) return nestedBodies(value)
  return typeof value === 'object' && value !== null ? [value as BlockBody] : []
}

/** `dynamic "x" { content { ... } }` by block name, with its content bodies. */
function dynamicBlocks(body: BlockBody): Map<string, BlockBody[]> {
  const found = new Map<string, BlockBody[]>()
  const dynamic = body.dynamic
  if (typeof dynamic !== 'object' || dynamic === null) return found
  for (const [name, bodies] of Object.entries(dynamic)) {
    found.set(
      name,
      nestedBodies(bodies).flatMap((one) => nestedBodies(one.content)),
    )
  }
  return found
}
