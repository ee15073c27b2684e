import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { brokenDir, examplesDir, readYamlFolder } from '../../support/read-yaml-documents.ts'
import { runCli } from '../../support/run-cli.ts'

interface JsonReport {
  resources: {
    filename: string
    status: string
    errors: { line: number; field: string; message: string }[]
  }[]
  summary: { valid: number; invalid: number; errors: number; skipped: number }
}

/** The `# error: <field>` markers of the broken fixtures, as "file:line field". */
function expectedMarkers(): string[] {
  return readYamlFolder(brokenDir).flatMap(({ file }) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => {
        const marker = /# error(?:: (\S+))?\s*$/.exec(line)
        return marker ? [`${file}:${i + 1} ${marker[1] ?? ''}`] : []
      }),
  )
}

describe('kinfctl validate', () => {
  it('accepts every example, exit 0', async () => {
    const { code, stdout } = await runCli(['validate', examplesDir, '--summary'])
    expect(stdout).toMatch(/Valid: 15, Invalid: 0, Errors: 0, Skipped: 0/)
    expect(code).toBe(0)
  })

  it('reports exactly the marked errors of the broken fixtures, with file, line and field', async () => {
    const { code, stdout } = await runCli(['validate', brokenDir, '--output', 'json'])
    expect(code).toBe(1)
    const report = JSON.parse(stdout) as JsonReport
    const reported = report.resources.flatMap((resource) =>
      resource.errors.map((error) => `${resource.filename}:${error.line} ${error.field}`),
    )
    expect(reported.sort()).toEqual(expectedMarkers().sort())
    for (const resource of report.resources) {
      for (const error of resource.errors) expect(error.message).not.toBe('')
    }
  })

  it('prints file:line:column, kind/name and the field path in text output', async () => {
    const { code, stdout } = await runCli(['validate', join(brokenDir, 'dangling-references.yaml')])
    expect(code).toBe(1)
    expect(stdout).toContain(
      `${brokenDir}/dangling-references.yaml:70:22: InferencePolicy/dangling spec.rules[2].action.route.backends[0]: GatewayBackend "no-such-backend" not found in namespace "fx-dangling"`,
    )
  })

  it('does not report a reference to a document that failed its own schema as missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinfctl-'))
    const file = join(dir, 'both.yaml')
    writeFileSync(
      file,
      readFileSync(join(examplesDir, 'platform.yaml'), 'utf8').replace(
        'targetPort: 8000',
        'targetPort: eight-thousand',
      ),
    )
    const { stdout } = await runCli(['validate', file])
    expect(stdout).toContain('spec.targetPort')
    expect(stdout).not.toContain('not found')
  })

  it('refuses a PII pattern the linear-time matcher cannot compile, naming the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinfctl-'))
    const file = join(dir, 'pii.yaml')
    const policy = readFileSync(join(examplesDir, 'pii-stays-local.yaml'), 'utf8')
    writeFileSync(file, policy.replace("regex: '\\bPRN-\\d{7}\\b'", "regex: '(?<!x)PRN-(\\d)\\1'"))
    const { code, stdout } = await runCli(['validate', file])
    expect(code).toBe(1)
    expect(stdout).toMatch(
      /InferencePolicy\/pii-stays-local spec\.pii\.patterns\[0\]\.regex: regex is not a regular expression the linear-time matcher \(RE2 syntax: no lookaround, no backreferences/,
    )
  })

  it('skips resources of other API groups and validates stdin', async () => {
    const secret = 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n'
    const { code, stdout } = await runCli(['validate', '-', '--summary'], secret)
    expect(stdout).toMatch(/Skipped: 1/)
    expect(code).toBe(0)
  })

  it('turns unreadable, oversized and non-UTF-8 input into errors, never exceptions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinfctl-'))
    const huge = join(dir, 'huge.yaml')
    writeFileSync(huge, '')
    truncateSync(huge, 9 * 1024 * 1024)
    const binary = join(dir, 'binary.yaml')
    writeFileSync(binary, Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x61]))
    const { code, stdout } = await runCli([
      'validate',
      huge,
      binary,
      join(dir, 'missing.yaml'),
      '-o',
      'json',
    ])
    expect(code).toBe(1)
    const report = JSON.parse(stdout) as JsonReport
    expect(report.summary.errors).toBe(3)
    const messages = report.resources.map((r) => r.errors[0]?.message ?? '')
    expect(messages.some((m) => /more than the \d+-byte limit/.test(m))).toBe(true)
    expect(messages.some((m) => /cannot read: .*encoded data/i.test(m))).toBe(true)
    expect(messages.some((m) => /cannot read: ENOENT/.test(m))).toBe(true)
  })

  it('exits 2 with usage on command-line mistakes', async () => {
    for (const argv of [
      [],
      ['validate'],
      ['validate', '--output', 'xml', 'x'],
      ['validate', '--bogus', 'x'],
      ['frobnicate'],
    ]) {
      const { code, stderr } = await runCli(argv)
      expect(code, argv.join(' ')).toBe(2)
      expect(stderr).toMatch(/Usage: kinfctl/)
    }
  })

  it('runs as a process through control-plane/kinfctl/kinfctl.js without stack traces', async () => {
    const run = promisify(execFile)
    const result = await run(process.execPath, [
      'control-plane/kinfctl/kinfctl.js',
      'validate',
      brokenDir,
      '--summary',
    ]).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    )
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/Summary: .* Invalid: \d+/)
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/\n\s+at /)
  })
})
