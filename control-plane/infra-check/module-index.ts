import { relative, resolve } from 'node:path'
import type { Declared, TerraformModule } from './load-terraform-module.ts'

/** What a module call's source points at. */
export type Callee =
  | { kind: 'local'; module: TerraformModule }
  | { kind: 'missing'; dir: string }
  | { kind: 'remote'; source: string }
  /** A local module with a file that does not parse: what it declares is unknown. */
  | { kind: 'unparsed'; module: TerraformModule }
  | { kind: 'none' }

/** The loaded modules by directory, so a call can be followed to the module it calls. */
export interface ModuleIndex {
  modules: ReadonlyMap<string, TerraformModule>
  callee(caller: TerraformModule, call: Declared): Callee
}

export const isLocalSource = (source: string) => /^\.\.?\//.test(source)

/** The called directory, relative to the working directory as module directories are. */
export function localSourceDir(caller: TerraformModule, source: string): string {
  return relative(process.cwd(), resolve(caller.dir, source)) || '.'
}

export function createModuleIndex(modules: ReadonlyMap<string, TerraformModule>): ModuleIndex {
  return {
    modules,
    callee(caller, call) {
      const source = call.body.source
      if (typeof source !== 'string') return { kind: 'none' }
      if (!isLocalSource(source)) return { kind: 'remote', source }
      const dir = localSourceDir(caller, source)
      const module = modules.get(dir)
      if (!module) return { kind: 'missing', dir }
      return module.complete ? { kind: 'local', module } : { kind: 'unparsed', module }
    },
  }
}
