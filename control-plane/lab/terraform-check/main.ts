import { parseArgs } from 'node:util'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { checkTerraformTree } from './check-terraform-tree.ts'
import { formatFinding } from './terraform-finding.ts'

/**
 * node control-plane/lab/terraform-check/main.ts [root, default infra/terraform] [--schema dir]
 * Prints every finding as file:line: message and exits 1 if there is any, 2 when the
 * schema snapshots cannot be read.
 */
const { values, positionals } = parseArgs({
  options: { schema: { type: 'string' } },
  allowPositionals: true,
})
const root = positionals[0] ?? 'infra/terraform'
const result = await checkTerraformTree(root, {
  schemaDir: values.schema ?? `${root}/schema`,
}).catch((error: unknown) => {
  if (!KinfError.isInstance(error)) throw error
  process.stderr.write(`${error.message}\n`)
  process.exit(2)
})
for (const finding of result.findings) process.stdout.write(`${formatFinding(finding)}\n`)
const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`
process.stdout.write(
  `${count(result.modules.length, 'Terraform module')} checked, ${count(result.findings.length, 'finding')}\n`,
)
process.exitCode = result.findings.length > 0 ? 1 : 0
