import type { Declared, TerraformModule } from './load-terraform-module.ts'
import type { ModuleIndex, ModuleInterface } from './module-index.ts'
import type { TerraformFinding } from './terraform-finding.ts'

/** Arguments of a module block that are Terraform's, not the called module's variables. */
const metaArguments = new Set(['source', 'version', 'count', 'for_each', 'providers', 'depends_on'])

/** `~> 21.19` or an exact `21.19.0` / `= 21.19.0`: a registry module cannot move under you. */
const pinnedVersion = /^\s*(~>\s*\d+(\.\d+){1,2}|=?\s*\d+\.\d+\.\d+(-[\w.]+)?)\s*$/

/** Registry addresses: [host/]namespace/name/provider. */
const registrySource = /^([\w.-]+\/)?[\w-]+\/[\w-]+\/[\w-]+$/

/**
 * Calls pass only the callee's variables and every one it has no default for (local
 * modules, and registry modules with a snapshot in the schema folder); registry calls are
 * pinned; git sources name a ref; local sources exist and take no version.
 */
export function checkModuleCalls(module: TerraformModule, index: ModuleIndex): TerraformFinding[] {
  return [...module.calls.values()].flatMap((call) => {
    const at = (key: string | null, message: string) => ({
      file: call.file.path,
      line: key === null ? call.line : call.file.locator.keyLine(call.line, key),
      message: `module ${call.name}: ${message}`,
    })
    const problems = [...sourceProblems(module, call, index)]
    const callee = index.interfaceOf(module, call)
    if (callee) problems.push(...inputProblems(call, callee))
    return problems.map(([key, message]) => at(key, message))
  })
}

/** [argument whose line to report, or null for the block's, message]. */
type Problem = [string | null, string]

function sourceProblems(module: TerraformModule, call: Declared, index: ModuleIndex): Problem[] {
  const callee = index.callee(module, call)
  const source = call.body.source
  switch (callee.kind) {
    case 'none':
      return [[null, 'no source']]
    case 'missing':
      return [['source', `no Terraform module at ${source}`]]
    case 'remote':
      return remoteProblems(callee.source, call.body.version)
  }
  return 'version' in call.body ? [['version', 'a local source takes no version']] : []
}

function inputProblems(call: Declared, callee: ModuleInterface): Problem[] {
  const args = Object.keys(call.body).filter((key) => !metaArguments.has(key))
  const unknown = args.filter((arg) => !callee.variables.has(arg))
  const missing = callee.required.filter((name) => !args.includes(name))
  return [
    ...unknown.map(
      (arg): Problem => [arg, `unknown input ${arg} (no such variable in ${callee.label})`],
    ),
    ...missing.map(
      (name): Problem => [
        null,
        `missing required input ${name} (${callee.label} has no default for it)`,
      ],
    ),
  ]
}

function remoteProblems(source: string, version: unknown): Problem[] {
  if (registrySource.test(source)) {
    if (typeof version === 'string' && pinnedVersion.test(version)) return []
    const found = typeof version === 'string' ? version : 'none'
    return [
      [
        'version',
        `registry module ${source} needs version = "~> X.Y" or an exact version (found ${found})`,
      ],
    ]
  }
  if (/^git::|^github\.com\//.test(source) && !/[?&]ref=/.test(source)) {
    return [['source', `git source ${source} needs ?ref= pinned to a tag or commit`]]
  }
  return []
}
