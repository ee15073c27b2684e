import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { examplesDir } from '../../support/read-yaml-documents.ts'
import { runCli } from '../../support/run-cli.ts'

const lines = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line))

function tempFile(name: string, content: string | Uint8Array): string {
  const file = join(mkdtempSync(join(tmpdir(), 'kinfctl-pii-')), name)
  writeFileSync(file, content)
  return file
}

describe('kinfctl pii', () => {
  it('prints one JSON line per input line with labels and spans', async () => {
    const input = 'write to jane@example.com\r\nnothing here\ncard 4111 1111 1111 1111\n'
    const { code, stdout, stderr } = await runCli(['pii', '-'], input)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(lines(stdout)).toEqual([
      {
        line: 1,
        labels: ['pii', 'pii:email'],
        spans: [{ type: 'email', start: 9, end: 25, text: 'jane@example.com' }],
      },
      { line: 2, labels: [], spans: [] },
      {
        line: 3,
        labels: ['pii', 'pii:card'],
        spans: [{ type: 'card', start: 5, end: 24, text: '4111 1111 1111 1111' }],
      },
    ])
  })

  it('reads a file and summarises on request', async () => {
    const file = tempFile('corpus.txt', 'SSN 536-22-1234\nhello\nip 10.1.2.3 and 10.1.2.4')
    const { code, stdout, stderr } = await runCli(['pii', '--summary', file])
    expect(code).toBe(0)
    expect(lines(stdout).map((line) => line.labels)).toEqual([
      ['pii', 'pii:ssn'],
      [],
      ['pii', 'pii:ip'],
    ])
    expect(stderr).toBe('3 lines, 2 with labels: pii 2, pii:ip 1, pii:ssn 1\n')
  })

  it('scans for the custom patterns of a policy file, a list or a patterns object', async () => {
    const policy = join(examplesDir, 'pii-stays-local.yaml')
    const list = tempFile(
      'p.yaml',
      '- {name: emp, regex: "EMP-\\\\d{6}", label: "pii:employee-id"}\n',
    )
    const object = tempFile(
      'p.json',
      '{"patterns":[{"name":"emp","regex":"EMP-\\\\d{6}","label":"hr"}]}',
    )
    const input = 'patient PRN-1234567, employee EMP-123456'
    const byPolicy = await runCli(['pii', '--patterns', policy, '-'], input)
    expect(lines(byPolicy.stdout)[0].labels).toEqual(['pii', 'pii:patient-record'])
    const byList = await runCli(['pii', '--patterns', list, '-'], input)
    expect(lines(byList.stdout)[0]).toEqual({
      line: 1,
      labels: ['pii', 'pii:employee-id'],
      spans: [{ type: 'pii:employee-id', start: 30, end: 40, text: 'EMP-123456' }],
    })
    const byObject = await runCli(['pii', '--patterns', object, '-'], input)
    expect(lines(byObject.stdout)[0].labels).toEqual(['hr'])
  })

  it('refuses bad patterns with exit 1 and a message naming the problem', async () => {
    const backreference = tempFile('p.yaml', '- {name: bad, regex: "(a)\\\\1", label: "pii:x"}\n')
    const badLabel = tempFile('p.yaml', '- {name: bad, regex: "a", label: "Not A Label"}\n')
    const notYaml = tempFile('p.yaml', 'patterns: [unclosed\n')
    const empty = tempFile('p.yaml', 'kind: InferencePolicy\nspec: {}\n')
    const cases: [string, RegExp][] = [
      [backreference, /patterns\[0\]\.regex: regex is not a regular expression the linear-time/],
      [badLabel, /patterns\[0\]\.label: must be lower-case words/],
      [notYaml, /not YAML or JSON/],
      [empty, /no PII patterns found/],
      ['/nonexistent/patterns.yaml', /cannot read .*: no such file/],
    ]
    for (const [file, message] of cases) {
      const { code, stdout, stderr } = await runCli(['pii', '--patterns', file, '-'], 'x')
      expect(stderr).toMatch(message)
      expect(code).toBe(1)
      expect(stdout).toBe('')
    }
  })

  it('refuses unreadable input with exit 1', async () => {
    const missing = await runCli(['pii', '/nonexistent/corpus.txt'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/cannot read \/nonexistent\/corpus.txt: no such file/)
    const binary = await runCli(['pii', tempFile('bin', new Uint8Array([0xff, 0xfe, 0x00, 0xc3]))])
    expect(binary.code).toBe(1)
    expect(binary.stderr).toMatch(/not UTF-8 text/)
    const folder = await runCli(['pii', tmpdir()])
    expect(folder.code).toBe(1)
    expect(folder.stderr).toMatch(/is a folder/)
  })

  it('exits 2 on usage mistakes', async () => {
    for (const argv of [['pii'], ['pii', 'a', 'b'], ['pii', '--bogus', '-']]) {
      const { code, stderr } = await runCli(argv)
      expect(code).toBe(2)
      expect(stderr).toMatch(/Usage: kinfctl pii/)
    }
    const help = await runCli(['pii', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/one JSON line per input line/)
  })
})
