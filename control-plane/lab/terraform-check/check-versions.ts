import type { TerraformModule } from './load-terraform-module.ts'
import { nestedBodies } from './terraform-body.ts'
import type { TerraformFinding } from './terraform-finding.ts'

/** `~> 5.22` or an exact version: what a root module, the one that gets applied, pins to. */
const pinned = /^\s*(~>\s*\d+(\.\d+){0,2}|=?\s*\d+\.\d+\.\d+)\s*$/

interface Requirement {
  source?: unknown
  version?: unknown
}

/** The provider a resource or data type belongs to: aws_iam_user -> aws. */
export const providerOfType = (type: string) => type.split('_')[0] ?? type

/**
 * Every module states required_version and, for every provider it uses, a source and a
 * version constraint in required_providers. Child modules may state a minimum (>=); a
 * root module pins each provider with ~> or an exact version.
 */
export function checkVersions(module: TerraformModule, isRoot: boolean): TerraformFinding[] {
  const [settings] = module.settings
  const first = module.files[0]
  if (!settings) {
    if (!first) return []
    return [
      {
        file: first.path,
        line: 1,
        message: 'no terraform block: state required_version and required_providers',
      },
    ]
  }
  const finding = (line: number, message: string) => ({ file: settings.file.path, line, message })
  const keyLine = (key: string) => settings.file.locator.keyLine(settings.line, key)
  const findings: TerraformFinding[] = []
  if (!module.settings.some((s) => typeof s.body.required_version === 'string')) {
    findings.push(finding(settings.line, 'terraform.required_version is not set'))
  }
  const required = requiredProviders(module)
  for (const name of usedProviders(module)) {
    if (!required.has(name))
      findings.push(
        finding(
          keyLine('required_providers'),
          `provider ${name} is used but not in required_providers`,
        ),
      )
  }
  for (const [name, requirement] of required) {
    for (const message of requirementProblems(name, requirement, isRoot))
      findings.push(finding(keyLine(name), message))
  }
  return findings
}

function requirementProblems(name: string, requirement: Requirement, isRoot: boolean): string[] {
  const problems: string[] = []
  if (typeof requirement.source !== 'string')
    problems.push(`required_providers.${name} has no source`)
  const version = requirement.version
  if (typeof version !== 'string') {
    problems.push(`required_providers.${name} has no version constraint: pin it`)
  } else if (isRoot && !pinned.test(version)) {
    problems.push(
      `required_providers.${name}: a root module pins providers with "~> X.Y" or an exact version (found "${version}")`,
    )
  }
  return problems
}

function requiredProviders(module: TerraformModule): Map<string, Requirement> {
  const required = new Map<string, Requirement>()
  for (const settings of module.settings) {
    for (const block of nestedBodies(settings.body.required_providers)) {
      for (const [name, value] of Object.entries(block)) {
        required.set(name, typeof value === 'object' && value !== null ? value : {})
      }
    }
  }
  return required
}

/** Terraform's own provider (terraform_data): never in required_providers. */
export const builtInProvider = 'terraform'

function usedProviders(module: TerraformModule): Set<string> {
  const used = new Set(module.providers.map((provider) => provider.name))
  for (const declared of [...module.resources.values(), ...module.dataSources.values()]) {
    const explicit = declared.body.provider
    used.add(
      typeof explicit === 'string'
        ? (explicit.replace(/^\$\{|\}$/g, '').split('.')[0] ?? '')
        : providerOfType(declared.type),
    )
  }
  used.delete(builtInProvider)
  return used
}
