import { parseHcl } from './hcl-parser.ts'
import { TerraformBody } from './terraform-body.ts'
import type { TerraformFinding } from './terraform-finding.ts'

export type ParsedTerraformFile =
  | { ok: true; body: TerraformBody }
  | { ok: false; finding: TerraformFinding }

/** `file:2,10-3,1: Summary; Detail` as hcl/v2 writes a diagnostic's range. */
const diagnosticPattern = /:(\d+),\d+-(?:\d+,)?\d+: (.+?)(?:\]|, and \d+ other diagnostic|$)/s

/**
 * Parses one .tf file with HashiCorp's HCL parser (hcl-parser.ts). A syntax error comes back as a finding at the parser's own line.
 */
export async function parseTerraformFile(file: string, text: string): Promise<ParsedTerraformFile> {
  let json: unknown
  try {
    json = await parseHcl(file, text)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const match = diagnosticPattern.exec(message)
    const line = Number(match?.[1] ?? 1)
    return { ok: false, finding: { file, line, message: `HCL syntax: ${match?.[2] ?? message}` } }
  }
  const body = TerraformBody.safeParse(json)
  if (!body.success) {
    const issue = body.error.issues[0]
    const where = issue?.path.join('.') ?? ''
    return {
      ok: false,
      finding: {
        file,
        line: 1,
        message: `unexpected parser output at ${where}: ${issue?.message}`,
      },
    }
  }
  return { ok: true, body: body.data }
}
