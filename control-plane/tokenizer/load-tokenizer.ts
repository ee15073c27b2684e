import { z } from 'zod'
import { functionOption, parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { createChatTemplateRenderer } from './create-chat-template-renderer.ts'
import { createImageExpander } from './create-image-expander.ts'
import { createModelPipeline } from './create-model-pipeline.ts'
import { createSpecialTokenAdder } from './create-special-token-adder.ts'
import { createTextEncoder } from './create-text-encoder.ts'
import { findTokenizerFiles } from './find-tokenizer-files.ts'
import {
  readTokenizerFiles,
  type TokenizerConfig,
  type TokenizerFiles,
} from './read-tokenizer-files.ts'
import { list, str, type Value } from './template-values.ts'
import type { Tokenizer } from './tokenizer.ts'

const sizeError = 'must be a non-negative integer'
const size = z.int({ error: sizeError }).min(0, { error: sizeError })

/**
 * Bounds of the cache of encoded segments (the text between two added tokens, such as a
 * whole system prompt).
 */
export const SegmentCacheOptions = z.strictObject({
  maxEntries: size.default(4096).describe('Segments kept; 0 turns the cache off'),
  maxChars: size.default(4_000_000).describe('Characters of the segments kept, in all'),
})
export type SegmentCacheOptions = z.infer<typeof SegmentCacheOptions>

export const TokenizerOptions = z.strictObject({
  // prefault, not default: an absent block is parsed, so it gets the defaults above.
  segmentCache: SegmentCacheOptions.prefault({}),
  now: functionOption<() => number>()
    .default(() => Date.now)
    .describe('Wall clock (ms) for strftime_now in chat templates (gpt-oss prints the date)'),
})
export type TokenizerOptions = z.infer<typeof TokenizerOptions>
export type TokenizerOptionsInput = z.input<typeof TokenizerOptions>

export type TokenizerLoad = { ok: true; tokenizer: Tokenizer } | { ok: false; error: KinfError }

const tokenText = (value: unknown): string | null =>
  typeof value === 'string'
    ? value
    : typeof value === 'object' && value !== null && 'content' in value
      ? String(value.content)
      : null

const specialTokenNames = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const

/**
 * transformers' `special_tokens_map`, which apply_chat_template gives the template: each
 * special token that is set, as its text (AddedToken objects reduce to their content),
 * additional_special_tokens when not empty, and the named extra_special_tokens.
 */
function specialTokenVariables(config: TokenizerConfig): Map<string, Value> {
  const out = new Map<string, Value>()
  for (const name of specialTokenNames) {
    const text = tokenText(config[name])
    if (text !== null) out.set(name, str(text))
  }
  const additional = (config.additional_special_tokens ?? []).flatMap((token) => {
    const text = tokenText(token)
    return text === null ? [] : [str(text)]
  })
  if (additional.length > 0) out.set('additional_special_tokens', list(additional))
  const extra = config.extra_special_tokens
  if (extra !== null && extra !== undefined && !Array.isArray(extra)) {
    for (const [name, token] of Object.entries(extra)) {
      const text = tokenText(token)
      if (text !== null) out.set(name, str(text))
    }
  }
  return out
}

function buildTokenizer(
  source: string,
  files: TokenizerFiles,
  options: TokenizerOptions,
): Tokenizer {
  const { tokenizerJson: json, tokenizerConfig: config } = files
  const pipeline = createModelPipeline(json)
  const idOf = (token: string | null) =>
    token === null ? undefined : pipeline.vocabulary.get(token)
  const encoder = createTextEncoder({
    pipeline,
    addedTokens: json.added_tokens,
    addSpecialTokens: createSpecialTokenAdder(json, config, (token) => idOf(token)),
    cache: options.segmentCache,
  })
  const encode = (text: string, addSpecialTokens = true) => encoder.encode(text, addSpecialTokens)
  const imageNames = {
    boi: tokenText(config.boi_token),
    eoi: tokenText(config.eoi_token),
    image: tokenText(config.image_token),
  }
  const images = createImageExpander(
    imageNames,
    files.imageSeqLength,
    (text) => encode(text, false),
    (token) => idOf(token),
  )
  const render = createChatTemplateRenderer(
    files.chatTemplates,
    specialTokenVariables(config),
    options.now,
    images?.placeholder ?? null,
  )
  const eosTokenId = idOf(tokenText(config.eos_token)) ?? files.generationEosIds?.[0]
  if (eosTokenId === undefined)
    throw new Error(
      'no eos_token in tokenizer_config.json nor eos_token_id in generation_config.json',
    )
  const vocabSize = pipeline.tokens.length
  return {
    name: source,
    eosTokenId,
    eosTokenIds: files.generationEosIds ?? [eosTokenId],
    padTokenId: idOf(tokenText(config.pad_token)) ?? null,
    bosTokenId: idOf(tokenText(config.bos_token)) ?? null,
    vocabSize,
    encode: (text, encodeOptions = {}) => encode(text, encodeOptions.addSpecialTokens ?? true),
    decode: (ids, decodeOptions = {}) => {
      for (const id of ids) {
        if (!Number.isInteger(id) || id < 0 || id >= vocabSize || pipeline.tokens[id] === undefined)
          throw new KinfError('invalid_request', `token id ${id} is not in the vocabulary`)
      }
      return pipeline.decode(ids, decodeOptions.skipSpecialTokens === true)
    },
    applyChatTemplate: (messages, chatOptions = {}) => {
      const { text, images: parts } = render(messages, chatOptions)
      const encodeText = (prompt: string) => encode(prompt, chatOptions.addSpecialTokens === true)
      // The renderer takes images only when there is an expander (images is not null).
      if (parts.length === 0 || images === null) return { text, tokenIds: encodeText(text) }
      return { text, ...images.expand(text, parts, encodeText) }
    },
    segmentCacheStats: () => encoder.stats(),
  }
}

/**
 * Loads the tokenizer a vLLM pod serving the model runs, from a source: a built-in name
 * or a Hugging Face model directory (see findTokenizerFiles). Tokenization is
 * `tokenizers`' pipeline as @lenml/tokenizers builds it from tokenizer.json, with
 * segments between added tokens cached; chat prompts are rendered as transformers
 * renders them. Never throws for a bad source: the KinfError (invalid_config, naming the
 * path and the missing or bad file) is the value. Bad options still throw.
 */
export function loadTokenizer(source: string, input: TokenizerOptionsInput = {}): TokenizerLoad {
  const options = parseOptions(TokenizerOptions, input, 'tokenizer')
  try {
    const files = readTokenizerFiles(source, findTokenizerFiles(source))
    try {
      return { ok: true, tokenizer: buildTokenizer(source, files, options) }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      throw new KinfError(
        'invalid_config',
        `tokenizer ${source}: the files in ${files.paths.directory} cannot be used: ${reason}`,
        { cause: error },
      )
    }
  } catch (error) {
    if (KinfError.isInstance(error)) return { ok: false, error }
    const reason = error instanceof Error ? error.message : String(error)
    return {
      ok: false,
      error: new KinfError('invalid_config', `tokenizer ${source}: ${reason}`, { cause: error }),
    }
  }
}
