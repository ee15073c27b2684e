import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { basename } from 'node:path'
import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { TokenizerFilePaths } from './find-tokenizer-files.ts'

/** An added token of tokenizer.json, with the defaults of Hugging Face `tokenizers`. */
export const AddedTokenJson = z.object({
  id: z.int().min(0),
  content: z.string().min(1),
  special: z.boolean().default(false),
  normalized: z.boolean().default(true),
  lstrip: z.boolean().default(false),
  rstrip: z.boolean().default(false),
  single_word: z.boolean().default(false),
})
export type AddedTokenJson = z.infer<typeof AddedTokenJson>

/** The parts of tokenizer.json this project reads itself; the rest goes to @lenml/tokenizers. */
const TokenizerJson = z.looseObject({
  added_tokens: z.array(AddedTokenJson).default([]),
  normalizer: z.unknown().optional(),
  pre_tokenizer: z.unknown().optional(),
  post_processor: z.unknown().optional(),
  decoder: z.unknown().optional(),
  model: z.looseObject({ type: z.string().optional() }),
})
export type TokenizerJson = z.infer<typeof TokenizerJson>

/** A special token in tokenizer_config.json: its text, or transformers' AddedToken object. */
const TokenText = z.union([z.string(), z.looseObject({ content: z.string() })]).nullish()

const ChatTemplateField = z.union(
  [z.string(), z.array(z.object({ name: z.string(), template: z.string() }))],
  { error: 'chat_template must be a string or a list of {"name", "template"}' },
)

const TokenizerConfig = z.looseObject({
  chat_template: ChatTemplateField.nullish(),
  bos_token: TokenText,
  eos_token: TokenText,
  unk_token: TokenText,
  sep_token: TokenText,
  pad_token: TokenText,
  cls_token: TokenText,
  mask_token: TokenText,
  additional_special_tokens: z.array(TokenText).nullish(),
  extra_special_tokens: z.union([z.record(z.string(), TokenText), z.array(TokenText)]).nullish(),
  tokenizer_class: z.string().nullish(),
  /** A multimodal model's image markers and soft token (Gemma 3's). */
  boi_token: TokenText,
  eoi_token: TokenText,
  image_token: TokenText,
  add_bos_token: z.boolean().nullish(),
  add_eos_token: z.boolean().nullish(),
})
export type TokenizerConfig = z.infer<typeof TokenizerConfig>

const ProcessorConfig = z.looseObject({ image_seq_length: z.int().min(1).nullish() })

const GenerationConfig = z.looseObject({
  eos_token_id: z.union([z.int().min(0), z.array(z.int().min(0))]).nullish(),
})

/** A chat template: one, or several by name (transformers picks "default", or "tool_use"). */
export type ChatTemplates = string | ReadonlyMap<string, string>

export interface TokenizerFiles {
  paths: TokenizerFilePaths
  tokenizerJson: TokenizerJson
  tokenizerConfig: TokenizerConfig
  /** chat_template.jinja when present, else tokenizer_config.json's; null when neither has one. */
  chatTemplates: ChatTemplates | null
  /** generation_config.json's `eos_token_id`, when the folder has one. */
  generationEosIds: number[] | null
  /** processor_config.json's `image_seq_length` (tokens per image), when it has one. */
  imageSeqLength: number | null
}

const mib = 1024 * 1024
/** Large enough for any tokenizer.json published (Gemma 3's is 33 MB), small enough to refuse junk. */
const limits = { json: 256 * mib, config: 64 * mib, small: 4 * mib }

/** A file's text, or null when it does not exist; throws for anything else (too big, unreadable). */
function readText(path: string, maxBytes: number): string | null {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  try {
    const size = fstatSync(fd).size
    if (size > maxBytes) throw new Error(`${size} bytes, more than the ${maxBytes}-byte limit`)
    const buffer = Buffer.alloc(size)
    let read = 0
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read)
      if (n === 0) break
      read += n
    }
    return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, read))
  } finally {
    closeSync(fd)
  }
}

export function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'invalid'
  const where = issue.path.map(String).join('.')
  return where === '' ? issue.message : `${where}: ${issue.message}`
}

function fail(source: string, file: string, problem: string, cause?: unknown): never {
  throw new KinfError('invalid_config', `tokenizer ${source}: ${basename(file)} ${problem}`, {
    cause,
  })
}

/** Reads and checks one JSON file; null when it is optional and missing. */
function readJson<S extends z.ZodType>(
  source: string,
  path: string,
  schema: S,
  options: { required: boolean; maxBytes: number },
): z.output<S> | null {
  let text: string | null
  try {
    text = readText(path, options.maxBytes)
  } catch (error) {
    fail(source, path, `cannot be read: ${error instanceof Error ? error.message : error}`, error)
  }
  if (text === null) {
    if (options.required) fail(source, path, `is missing (looked for ${path})`)
    return null
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    fail(source, path, `is not JSON: ${error instanceof Error ? error.message : error}`, error)
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) fail(source, path, `is not valid: ${describeIssue(parsed.error.issues[0])}`)
  return parsed.data
}

function chatTemplatesOf(field: z.infer<typeof ChatTemplateField> | null | undefined) {
  if (field === null || field === undefined) return null
  if (typeof field === 'string') return field
  return new Map(field.map(({ name, template }) => [name, template]))
}

/**
 * Reads a tokenizer's files as transformers reads a model folder: tokenizer.json and
 * tokenizer_config.json (both required), special_tokens_map.json over the config's
 * special tokens, chat_template.jinja over the config's chat_template,
 * generation_config.json's eos ids and processor_config.json's tokens per image. Throws KinfError invalid_config naming the source and
 * the file that is missing, unreadable, too large or malformed.
 */
export function readTokenizerFiles(source: string, paths: TokenizerFilePaths): TokenizerFiles {
  const json = { required: true, maxBytes: limits.json }
  const config = { required: true, maxBytes: limits.config }
  const optional = { required: false, maxBytes: limits.small }
  const tokenizerJson = readJson(source, paths.tokenizerJson, TokenizerJson, json)
  const tokenizerConfig = readJson(source, paths.tokenizerConfig, TokenizerConfig, config)
  const specialTokensMap = readJson(source, paths.specialTokensMap, TokenizerConfig, optional)
  const generation = readJson(source, paths.generationConfig, GenerationConfig, optional)
  const processor = readJson(source, paths.processorConfig, ProcessorConfig, optional)
  let jinja: string | null
  try {
    jinja = readText(paths.chatTemplateJinja, limits.small)
  } catch (error) {
    fail(source, paths.chatTemplateJinja, `cannot be read: ${error}`, error)
  }
  if (tokenizerJson === null || tokenizerConfig === null) throw new Error('unreachable')
  const eos = generation?.eos_token_id
  return {
    paths,
    tokenizerJson,
    tokenizerConfig: { ...tokenizerConfig, ...specialTokensOf(specialTokensMap) },
    chatTemplates: jinja ?? chatTemplatesOf(tokenizerConfig.chat_template),
    generationEosIds:
      eos === undefined || eos === null ? null : typeof eos === 'number' ? [eos] : eos,
    imageSeqLength: processor?.image_seq_length ?? null,
  }
}

const specialTokenKeys = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
  'additional_special_tokens',
] as const

/** What special_tokens_map.json sets, which transformers lets override the config. */
function specialTokensOf(map: TokenizerConfig | null): Partial<TokenizerConfig> {
  if (map === null) return {}
  const out: Partial<TokenizerConfig> = {}
  for (const key of specialTokenKeys) {
    if (map[key] !== undefined && map[key] !== null) Object.assign(out, { [key]: map[key] })
  }
  return out
}
