import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { checkTerraformTree } from '../../../../control-plane/lab/terraform-check/check-terraform-tree.ts'
import {
  formatFinding,
  sortFindings,
} from '../../../../control-plane/lab/terraform-check/terraform-finding.ts'

/** The valid tree every broken case starts from. */
export const minimalFixture = 'test/fixtures/terraform/minimal'
export const schemaDir = 'infra/terraform/schema'

/** One change to a file of the fixture: `find` must occur in it. */
export interface Edit {
  file: string
  find: string
  replace: string
}

export interface BrokenCheck {
  /** Findings as `file:line: message`, the file relative to the fixture, in file and line order. */
  findings: string[]
  /** Line of the first occurrence of `text` in the edited file. */
  lineOf(file: string, text: string): number
}

/** Copies the fixture (or another tree), applies the edits, checks the copy. */
export async function checkBroken(
  edits: readonly Edit[],
  from = minimalFixture,
): Promise<BrokenCheck> {
  const dir = await mkdtemp(join(tmpdir(), 'kinference-terraform-'))
  try {
    await cp(from, dir, { recursive: true })
    const texts = new Map<string, string>()
    for (const edit of edits) {
      const path = join(dir, edit.file)
      const text = texts.get(edit.file) ?? (await readFile(path, 'utf8'))
      if (!text.includes(edit.find))
        throw new Error(`${edit.file} has no ${JSON.stringify(edit.find)}`)
      texts.set(edit.file, text.replace(edit.find, edit.replace))
      await writeFile(path, texts.get(edit.file) ?? '')
    }
    const result = await checkTerraformTree(dir, { schemaDir })
    const inFixture = result.findings.map((f) => ({ ...f, file: relative(dir, resolve(f.file)) }))
    const findings = sortFindings(inFixture).map(formatFinding)
    const lineOf = (file: string, text: string) => {
      const source = texts.get(file) ?? ''
      const index = source.indexOf(text)
      if (index < 0) throw new Error(`${file} has no ${JSON.stringify(text)}`)
      return source.slice(0, index).split('\n').length
    }
    return { findings, lineOf }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
