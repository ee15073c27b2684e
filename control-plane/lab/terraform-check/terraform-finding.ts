/** One problem in a Terraform file, printed as `file:line: message`. */
export interface TerraformFinding {
  file: string
  line: number
  message: string
}

export function formatFinding(finding: TerraformFinding): string {
  return `${finding.file}:${finding.line}: ${finding.message}`
}

/** Findings in file order, then line order, each once. */
export function sortFindings(findings: readonly TerraformFinding[]): TerraformFinding[] {
  const seen = new Set<string>()
  return [...findings]
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
    .filter((finding) => {
      const key = formatFinding(finding)
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
}
