import type { Declared, TerraformModule } from './load-terraform-module.ts'
import type { TerraformFinding } from './terraform-finding.ts'

/** Names that say the value is a credential. */
const secretName = /(secret|password|passwd|token|private_key|api_key)/i

/**
 * Variables have a type and a description; a secret is sensitive and has no default
 * (null is allowed: it means "not set"); outputs are described; only a root module
 * configures providers (a child module takes them from its caller).
 */
export function checkDeclarations(module: TerraformModule, isRoot: boolean): TerraformFinding[] {
  const findings = [...module.variables.values()].flatMap(variableFindings)
  for (const output of module.outputs.values()) {
    if (!('description' in output.body))
      findings.push(at(output, `output ${output.name} has no description`))
  }
  if (!isRoot) {
    for (const provider of module.providers) {
      findings.push(
        at(
          provider,
          `provider ${provider.name} is configured in a child module; configure it in the root and pass it in`,
        ),
      )
    }
  }
  return findings
}

function variableFindings(variable: Declared): TerraformFinding[] {
  const { body, name, file } = variable
  const findings: TerraformFinding[] = []
  const add = (message: string, key?: string) => {
    const line = key === undefined ? variable.line : file.locator.keyLine(variable.line, key)
    findings.push({ file: file.path, line, message })
  }
  if (!('type' in body)) add(`variable ${name} has no type`)
  if (typeof body.description !== 'string' || body.description.trim() === '') {
    add(`variable ${name} has no description`)
  }
  const sensitive = body.sensitive === true
  if (sensitive && 'default' in body && body.default !== null) {
    add(`variable ${name} is sensitive but has a default: secrets come from the caller`, 'default')
  }
  if (!sensitive && secretName.test(name)) {
    add(`variable ${name} looks like a secret: mark it sensitive = true`)
  }
  return findings
}

const at = (declared: Declared, message: string): TerraformFinding => ({
  file: declared.file.path,
  line: declared.line,
  message,
})
