import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TerraformModule } from './load-terraform-module.ts'
import { parseTerraformFile } from './parse-terraform-file.ts'
import { createSourceLocator } from './source-locator.ts'
import type { TerraformFinding } from './terraform-finding.ts'

const tfvarsFile = /\.tfvars(\.example)?$/

/**
 * Variable files beside a module (terraform.tfvars, *.tfvars.example) parse, set only
 * declared variables, and an example sets every required one that is not a secret
 * (secrets are meant to come from TF_VAR_ variables, not from a file).
 */
export async function checkTfvars(module: TerraformModule): Promise<TerraformFinding[]> {
  const names = (await readdir(module.dir)).filter((name) => tfvarsFile.test(name)).sort()
  const findings: TerraformFinding[] = []
  for (const name of names) {
    const path = join(module.dir, name)
    const text = await readFile(path, 'utf8')
    const parsed = await parseTerraformFile(path, text)
    if (!parsed.ok) {
      findings.push(parsed.finding)
      continue
    }
    const locator = createSourceLocator(text)
    const set = Object.keys(parsed.body)
    for (const key of set.filter((key) => !module.variables.has(key))) {
      findings.push({
        file: path,
        line: locator.assignmentLine(key, 1),
        message: `${name} sets ${key}, which is not a variable of the module`,
      })
    }
    if (!name.endsWith('.example')) continue
    for (const variable of module.variables.values()) {
      const required = !('default' in variable.body) && variable.body.sensitive !== true
      if (required && !set.includes(variable.name)) {
        findings.push({
          file: path,
          line: 1,
          message: `${name} does not set the required variable ${variable.name}`,
        })
      }
    }
  }
  return findings
}
