import { relative, resolve } from 'node:path'
import type { Declared, TerraformModule } from './load-terraform-module.ts'
import type { RegistryModuleSnapshot, RegistryModules } from './registry-module-snapshot.ts'

/** What a module call's source points at. */
export type Callee =
  | { kind: 'local'; module: TerraformModule }
  | { kind: 'missing'; dir: string }
  /** A registry or remote module; its snapshot when the schema folder has one. */
  | { kind: 'remote'; source: string; snapshot?: RegistryModuleSnapshot }
  /** A local module with a file that does not parse: what it declares is unknown. */
  | { kind: 'unparsed'; module: TerraformModule }
  | { kind: 'none' }

/** What a caller may pass to and read from a module, wherever it is defined. */
export interface ModuleInterface {
  /** The module for messages: its source, and the snapshot version of a registry module. */
  label: string
  variables: ReadonlySet<string>
  required: readonly string[]
  outputs: ReadonlySet<string>
  sensitiveOutputs: ReadonlySet<string>
}

/** The loaded modules by directory, so a call can be followed to the module it calls. */
export interface ModuleIndex {
  modules: ReadonlyMap<string, TerraformModule>
  callee(caller: TerraformModule, call: Declared): Callee
  /** The called module's interface, or undefined when it is not known here. */
  interfaceOf(caller: TerraformModule, call: Declared): ModuleInterface | undefined
}

export const isLocalSource = (source: string) => /^\.\.?\//.test(source)

/** The called directory, relative to the working directory as module directories are. */
export function localSourceDir(caller: TerraformModule, source: string): string {
  return relative(process.cwd(), resolve(caller.dir, source)) || '.'
}

export function createModuleIndex(
  modules: ReadonlyMap<string, TerraformModule>,
  registry: RegistryModules = new Map(),
): ModuleIndex {
  const callee = (caller: TerraformModule, call: Declared): Callee => {
    const source = call.body.source
    if (typeof source !== 'string') return { kind: 'none' }
    if (!isLocalSource(source)) {
      const snapshot = registry.get(source.replace(/^registry\.terraform\.io\//, ''))
      return snapshot ? { kind: 'remote', source, snapshot } : { kind: 'remote', source }
    }
    const dir = localSourceDir(caller, source)
    const module = modules.get(dir)
    if (!module) return { kind: 'missing', dir }
    return module.complete ? { kind: 'local', module } : { kind: 'unparsed', module }
  }
  return {
    modules,
    callee,
    interfaceOf(caller, call) {
      const found = callee(caller, call)
      if (found.kind === 'local') return localInterface(found.module, String(call.body.source))
      if (found.kind === 'remote' && found.snapshot) return snapshotInterface(found.snapshot)
      return undefined
    },
  }
}

function localInterface(module: TerraformModule, source: string): ModuleInterface {
  const variables = [...module.variables.values()]
  const outputs = [...module.outputs.values()]
  return {
    label: source,
    variables: new Set(module.variables.keys()),
    required: variables.filter((v) => !('default' in v.body)).map((v) => v.name),
    outputs: new Set(module.outputs.keys()),
    sensitiveOutputs: new Set(outputs.filter((o) => o.body.sensitive === true).map((o) => o.name)),
  }
}

function snapshotInterface(snapshot: RegistryModuleSnapshot): ModuleInterface {
  return {
    label: `${snapshot.source} ${snapshot.version}`,
    variables: new Set([...snapshot.required, ...snapshot.optional]),
    required: snapshot.required,
    outputs: new Set(snapshot.outputs),
    sensitiveOutputs: new Set(snapshot.sensitiveOutputs),
  }
}
