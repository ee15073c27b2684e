import { readdir } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { checkDeclarations } from './check-declarations.ts'
import { checkModuleCalls } from './check-module-calls.ts'
import { checkReferences } from './check-references.ts'
import { checkResourceSchemas } from './check-resource-schema.ts'
import { checkSensitiveOutputs } from './check-sensitive-outputs.ts'
import { checkTfvars } from './check-tfvars.ts'
import { checkVersions } from './check-versions.ts'
import { collectReferences, type FoundReference } from './collect-references.ts'
import {
  type Declared,
  loadTerraformModule,
  type TerraformModule,
} from './load-terraform-module.ts'
import {
  createModuleIndex,
  isLocalSource,
  localSourceDir,
  type ModuleIndex,
} from './module-index.ts'
import { loadProviderSchemas } from './provider-schema.ts'
import { loadRegistryModules } from './registry-module-snapshot.ts'
import { sortFindings, type TerraformFinding } from './terraform-finding.ts'
import { variableShapes } from './variable-type-shape.ts'

export interface TerraformCheckOptions {
  /** The committed provider schema snapshots (infra/terraform/schema), registry modules' in its modules/. */
  schemaDir: string
}

export interface TerraformCheckResult {
  findings: TerraformFinding[]
  /** Every module directory checked, relative to the working directory. */
  modules: string[]
  /** For each directory, the local module directories it calls. */
  calls: ReadonlyMap<string, string[]>
}

/**
 * Checks every Terraform module under `root` (and any local module they call) without
 * Terraform: HashiCorp's parser, then references, module calls, declarations, version
 * pins, resource arguments against the schema snapshot, and sensitive outputs.
 */
export async function checkTerraformTree(
  root: string,
  options: TerraformCheckOptions,
): Promise<TerraformCheckResult> {
  const schemas = await loadProviderSchemas(options.schemaDir)
  const { modules, findings } = await loadTree(root)
  const index = createModuleIndex(
    modules,
    await loadRegistryModules(join(options.schemaDir, 'modules')),
  )
  const calls = localCalls(index)
  const called = new Set([...calls.values()].flat())
  const library = `${toDir(join(root, 'modules'))}/`
  for (const module of modules.values()) {
    // A file that does not parse hides declarations: its syntax error is the finding.
    if (!module.complete) continue
    // Modules under modules/ are libraries even when nothing calls them (that is reported).
    const isRoot = !called.has(module.dir) && !module.dir.startsWith(library)
    const references = await moduleReferences(module)
    const all = [...references.values()].flat()
    findings.push(
      ...checkReferences(module, all, index, await variableShapes(module)),
      ...checkModuleCalls(module, index),
      ...checkDeclarations(module, isRoot),
      ...checkVersions(module, isRoot),
      ...checkResourceSchemas(module, schemas),
      ...checkSensitiveOutputs({ module, references, index, schemas }),
      ...(await checkTfvars(module)),
    )
  }
  findings.push(...unusedModules(root, modules, called))
  return { findings: sortFindings(findings), modules: [...modules.keys()].sort(), calls }
}

const toDir = (path: string) => relative(process.cwd(), resolve(path)) || '.'

async function loadTree(root: string) {
  const modules = new Map<string, TerraformModule>()
  const findings: TerraformFinding[] = []
  const pending = await terraformDirs(toDir(root))
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    if (modules.has(dir)) continue
    const loaded = await loadTerraformModule(dir).catch(() => null)
    if (!loaded) continue // a missing source: checkModuleCalls reports it
    modules.set(dir, loaded.module)
    findings.push(...loaded.findings)
    for (const call of loaded.module.calls.values()) {
      const source = call.body.source
      if (typeof source === 'string' && isLocalSource(source))
        pending.push(toDir(localSourceDir(loaded.module, source)))
    }
  }
  return { modules, findings }
}

/** Directories under `dir` holding .tf files (not .terraform caches). */
async function terraformDirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const here = entries.some((entry) => entry.isFile() && entry.name.endsWith('.tf')) ? [dir] : []
  const below = entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
  return [
    ...here,
    ...(await Promise.all(below.map((entry) => terraformDirs(join(dir, entry.name))))).flat(),
  ]
}

function localCalls(index: ModuleIndex): Map<string, string[]> {
  const calls = new Map<string, string[]>()
  for (const module of index.modules.values()) {
    const callees = [...module.calls.values()].map((call) => index.callee(module, call))
    calls.set(
      module.dir,
      callees.flatMap((callee) => ('module' in callee ? [callee.module.dir] : [])),
    )
  }
  return calls
}

async function moduleReferences(module: TerraformModule): Promise<Map<Declared, FoundReference[]>> {
  const kinds = [
    ['variable', module.variables.values()],
    ['output', module.outputs.values()],
    ['local', module.locals.values()],
    ['module', module.calls.values()],
    ['resource', module.resources.values()],
    ['data', module.dataSources.values()],
    ['provider', module.providers.values()],
  ] as const
  const references = new Map<Declared, FoundReference[]>()
  for (const [kind, declarations] of kinds) {
    for (const declared of declarations)
      references.set(declared, await collectReferences(kind, declared))
  }
  return references
}

/** A module under `root/modules/` that nothing calls is dead code or a forgotten wiring. */
function unusedModules(
  root: string,
  modules: ReadonlyMap<string, TerraformModule>,
  called: ReadonlySet<string>,
) {
  const library = `${toDir(join(root, 'modules'))}/`
  return [...modules.values()]
    .filter((module) => module.dir.startsWith(library) && !called.has(module.dir))
    .map((module) => ({
      file: module.files[0]?.path ?? module.dir,
      line: 1,
      message: `module ${relative(toDir(root), module.dir)} is not called by any configuration in this tree`,
    }))
}
