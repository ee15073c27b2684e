import type { Declared, TerraformModule } from './load-terraform-module.ts'
import type { ModuleIndex } from './module-index.ts'
import type { TerraformFinding } from './terraform-finding.ts'

/** Arguments of a module block that are Terraform's, not the called module's variables. */
const metaArguments = new Set(['source', 'version', 'count', 'for_each', 'providers', 'depends_on'])

/** `~> 21.19` or an exact `21.19.0` / `= 21.19.0`: a registry module cannot move under you. */
const pinnedVersion = /^\s*(~>\s*\d+(\.\d+){1,2}|=?\s*\d+\.\d+\.\d+(-[\w.]+)?)\s*$/

/** Registry addresses: [host/]namespace/name/provider. */
const registrySource = /^([\w.-]+\/)?[\w-]+\/[\w-]+\/[\w-]+$/

/**
 * Local calls pass only the callee's variables and every one without a default; registry
 * calls are pinned; git sources name a ref. Remote modules' variables are not checked:
 * their source is not here.
 */
export function checkModuleCalls(module: TerraformModule, index: ModuleIndex): TerraformFinding[] {
  return [...module.calls.values()].flatMap((call) => callFindings(module, call, index))
}

function callFindings(
  module: TerraformModule,
  call: Declared,
  index: ModuleIndex,
): TerraformFinding[] {
  const finding = (line: number, message: string) => ({ file: call.file.path, line, message })
  const keyLine = (key: string) => call.file.locator.keyLine(call.line, key)
  const callee = index.callee(module, call)
  switch (callee.kind) {
    case 'none':
      return [finding(call.line, `module ${call.name} has no source`)]
    case 'missing':
      return [
        finding(
          keyLine('source'),
          `module ${call.name}: no Terraform module at ${call.body.source}`,
        ),
      ]
    case 'unparsed':
      return []
    case 'remote':
      return remoteFindings(call, callee.source).map((message) =>
        finding(keyLine('version'), message),
      )
  }
  const findings: TerraformFinding[] = []
  if ('version' in call.body) {
    findings.push(
      finding(keyLine('version'), `module ${call.name}: a local source takes no version`),
    )
  }
  const args = Object.keys(call.body).filter((key) => !metaArguments.has(key))
  for (const arg of args) {
    if (callee.module.variables.has(arg)) continue
    findings.push(
      finding(
        keyLine(arg),
        `module ${call.name}: unknown input ${arg} (no such variable in ${call.body.source})`,
      ),
    )
  }
  for (const [name, variable] of callee.module.variables) {
    if ('default' in variable.body || args.includes(name)) continue
    findings.push(
      finding(
        call.line,
        `module ${call.name}: missing required input ${name} (${call.body.source} has no default for it)`,
      ),
    )
  }
  return findings
}

function remoteFindings(call: Declared, source: string): string[] {
  if (registrySource.test(source)) {
    const version = call.body.version
    if (typeof version === 'string' && pinnedVersion.test(version)) return []
    return [
      `module ${call.name}: registry module ${source} needs version = "~> X.Y" or an exact version (found ${version ?? 'none'})`,
    ]
  }
  if (/^git::|^github\.com\//.test(source) && !/[?&]ref=/.test(source)) {
    return [`module ${call.name}: git source ${source} needs ?ref= pinned to a tag or commit`]
  }
  return []
}
