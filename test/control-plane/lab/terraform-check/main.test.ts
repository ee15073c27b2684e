import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { minimalFixture, schemaDir } from './broken-terraform.ts'

const run = promisify(execFile)
const main = 'control-plane/lab/terraform-check/main.ts'

async function check(root: string): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [main, root, '--schema', schemaDir])
    return { code: 0, stdout }
  } catch (error) {
    const failed = error as { code: number; stdout: string }
    return { code: failed.code, stdout: failed.stdout }
  }
}

describe('node control-plane/lab/terraform-check/main.ts', () => {
  it('exits 0 and says what it checked when the tree is clean', async () => {
    expect(await check(minimalFixture)).toEqual({
      code: 0,
      stdout: '2 Terraform modules checked, 0 findings\n',
    })
  })

  it('prints file:line: message and exits 1 on a finding', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kinference-terraform-'))
    try {
      await writeFile(join(dir, 'bad.tf'), 'variable "x" {\n  type = \n}\n')
      const { code, stdout } = await check(dir)
      expect(code).toBe(1)
      const file = relative(process.cwd(), join(dir, 'bad.tf'))
      expect(stdout.split('\n')[0]).toMatch(
        new RegExp(`^${file}:2: HCL syntax: Invalid expression`),
      )
      expect(stdout).toContain('1 Terraform module checked, 1 finding')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
