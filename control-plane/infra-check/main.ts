import { parseArgs } from 'node:util'
import { checkTerraformTree } from './check-terraform-tree.ts'
import { formatFinding } from './terraform-finding.ts'

/**
 * node control-plane/infra-check/main.ts [root, default infra/terraform] [--schema dir]
 * Prints every finding as file:line: message and exits 1 if there is any.
 */
const { values, positionals } = parseArgs({
  options: { schema: { type: 'string' } },
  allowPositionals: true,
})
const root = positionals[0] ?? 'infra/terraform'
const result = await checkTerraformTree(root, { schemaDir: values.schema ?? `${root}/schema` })
for (const finding of result.findings) process.stdout.write(`${formatFinding(finding)}\n`)
process.stdout.write(
  `${result.modules.length} Terraform modules checked, ${result.findings.length} findings\n`,
)
process.exitCode = result.findings.length > 0 ? 1 : 0
