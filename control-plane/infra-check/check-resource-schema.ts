import { providerOfType } from './check-versions.ts'
import type { TerraformModule, TypedDeclared } from './load-terraform-module.ts'
import { type ProviderSchemas, type SchemaBlock, settableNames } from './provider-schema.ts'
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
  const schema = schemas.get(provider)
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

function blockFindings(
  body: BlockBody,
  block: SchemaBlock,
  meta: ReadonlySet<string>,
  context: Context,
): TerraformFinding[] {
  const { declared, label } = context
  const findings: TerraformFinding[] = []
  const add = (key: string, message: string) =>
    findings.push({
      file: declared.file.path,
      line: declared.file.locator.keyLine(declared.line, key),
      message,
    })
  const settable = settableNames(block)
  const dynamic = dynamicBlocks(body)
  for (const [key, value] of Object.entries(body)) {
    if (meta.has(key)) continue
    if (key === 'dynamic') continue
    const nested = block.blocks?.[key]
    if (nested) {
      for (const inner of nestedBodies(value))
        findings.push(...blockFindings(inner, nested, new Set(), context))
    } else if (block.readOnly?.includes(key)) {
      add(key, `${label}: ${key} is read-only (the provider computes it)`)
    } else if (!settable.has(key)) {
      add(key, `${label}: unknown argument ${key} (not in ${context.version})`)
    }
  }
  for (const [name, contents] of dynamic) {
    const nested = block.blocks?.[name]
    if (!nested)
      add(name, `${label}: unknown block ${name} in dynamic "${name}" (not in ${context.version})`)
    else
      for (const inner of contents)
        findings.push(...blockFindings(inner, nested, new Set(), context))
  }
  for (const name of block.required ?? []) {
    if (!(name in body) && !dynamic.has(name))
      add(name, `${label}: missing required argument ${name}`)
  }
  return findings
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
