import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { examplesDir } from '../../support/read-yaml-documents.ts'
import { runCli } from '../../support/run-cli.ts'

/** The burst example with `from` replaced by `to`, in a file of its own. */
function variant(from: string, to: string): { file: string; line: number } {
  const text = readFileSync(join(examplesDir, 'burst-to-bedrock.yaml'), 'utf8')
  expect(text).toContain(from)
  const changed = text.replace(from, to)
  const file = join(mkdtempSync(join(tmpdir(), 'kinfctl-')), 'burst.yaml')
  writeFileSync(file, changed)
  const line = changed.slice(0, changed.indexOf(to)).split('\n').length
  return { file, line }
}

describe('the policy fields of the edge’s contract, as kinfctl validate reads them', () => {
  it('names file, line and field for a dropFields value Bedrock does honour', async () => {
    const { file, line } = variant('dropFields: [seed]', 'dropFields: [temperature]')
    const { code, stdout } = await runCli(['validate', file])
    expect(code).toBe(1)
    expect(stdout).toMatch(
      new RegExp(
        `${file}:${line}:\\d+: InferencePolicy/burst-to-bedrock spec\\.rules\\[0\\]\\.action\\.burst\\.dropFields\\[0\\]`,
      ),
    )
  })

  it('names file, line and field for a vllmFields value that is no vLLM-only field', async () => {
    const { file, line } = variant(
      'models: [qwen3.8-27b-fp8]\n  rules',
      'models: [qwen3.8-27b-fp8]\n      vllmFields: [temperature]\n  rules',
    )
    const { code, stdout } = await runCli(['validate', file])
    expect(code).toBe(1)
    expect(stdout).toMatch(
      new RegExp(
        `${file}:${line + 1}:\\d+: InferencePolicy/burst-to-bedrock spec\\.tenants\\[0\\]\\.vllmFields\\[0\\]`,
      ),
    )
  })
})
