import { providerOfType } from './check-versions.ts'
import type { FoundReference } from './collect-references.ts'
import type { Declared, TerraformModule } from './load-terraform-module.ts'
import type { ModuleIndex } from './module-index.ts'
import type { ProviderSchemas } from './provider-schema.ts'
import type { TerraformFinding } from './terraform-finding.ts'

export interface SensitivityContext {
  module: TerraformModule
  /** References by the declaration they appear in. */
  references: ReadonlyMap<Declared, readonly FoundReference[]>
  index: ModuleIndex
  schemas: ProviderSchemas
}

/**
 * An output whose value reads a sensitive variable, a sensitive output of a local module,
 * a sensitive attribute of a resource (per the schema snapshot), or a local computed from
 * any of these, must itself be sensitive, as terraform plan would insist. A whole resource
 * (or a splat, whose attribute the parser drops) counts as sensitive if any attribute is.
 */
export function checkSensitiveOutputs(context: SensitivityContext): TerraformFinding[] {
  const sensitive = createSensitivity(context)
  return [...context.module.outputs.values()].flatMap((output) => {
    if (output.body.sensitive === true) return []
    const leak = (context.references.get(output) ?? []).find((ref) => sensitive(ref.segments))
    if (!leak) return []
    const what = leak.segments.slice(0, 3).join('.')
    return [
      {
        file: output.file.path,
        line: output.line,
        message: `output ${output.name} exposes the sensitive ${what}: set sensitive = true`,
      },
    ]
  })
}

function createSensitivity({ module, references, index, schemas }: SensitivityContext) {
  const localState = new Map<string, boolean>()
  const isSensitive = (segments: readonly string[]): boolean => {
    const [root = '', first = '', second, third] = segments
    switch (root) {
      case 'var':
        return module.variables.get(first)?.body.sensitive === true
      case 'local':
        return localSensitive(first)
      case 'module':
        return moduleOutputSensitive(first, second)
      case 'data':
        return attributeSensitive(first, third)
    }
    return module.resources.has(`${root}.${first}`) && attributeSensitive(root, second)
  }
  const localSensitive = (name: string): boolean => {
    const known = localState.get(name)
    if (known !== undefined) return known
    localState.set(name, false) // a cycle is not a leak; terraform reports cycles itself
    const local = module.locals.get(name)
    const result = (local ? (references.get(local) ?? []) : []).some((ref) =>
      isSensitive(ref.segments),
    )
    localState.set(name, result)
    return result
  }
  const moduleOutputSensitive = (name: string, output: string | undefined): boolean => {
    const call = module.calls.get(name)
    const sensitive = call ? index.interfaceOf(module, call)?.sensitiveOutputs : undefined
    if (!sensitive) return false
    return output === undefined ? sensitive.size > 0 : sensitive.has(output)
  }
  const attributeSensitive = (type: string, attribute: string | undefined): boolean => {
    const block =
      schemas.get(providerOfType(type))?.resources[type] ??
      schemas.get(providerOfType(type))?.dataSources[type]
    const marked = block?.sensitive ?? []
    return attribute === undefined ? marked.length > 0 : marked.includes(attribute)
  }
  return isSensitive
}
