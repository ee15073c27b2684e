import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { createSegmentEncoder, type SegmentCacheStats } from './create-segment-encoder.ts'
import type { ModelFiles } from './load-model-files.ts'

export interface SimEncodeOptions {
  /**
   * Hugging Face's `add_special_tokens` (BOS and the like, as the tokenizer adds them).
   * Default false, unlike Hugging Face: vLLM's chat path leaves them to the template.
   */
  addSpecialTokens?: boolean
}

export interface SimDecodeOptions {
  skipSpecialTokens?: boolean
}

/** The simulated pod's tokenizer: Hugging Face's tokenizers.js over the model's own files. */
export interface SimTokenizer {
  /** One past the largest id the tokenizer knows, added tokens included (vLLM's max_token_id + 1). */
  readonly vocabSize: number
  /** The token a turn ends with: tokenizer_config's eos_token, else generation_config's first. */
  readonly eosTokenId: number
  /**
   * transformers' special_tokens_map (bos_token, eos_token, pad_token, …, as strings, and
   * additional_special_tokens), which apply_chat_template passes to every template.
   */
  readonly specialTokens: Readonly<Record<string, unknown>>
  encode(text: string, options?: SimEncodeOptions): number[]
  decode(ids: readonly number[], options?: SimDecodeOptions): string
  /** The vocabulary entry of an id (`Ġthe`), as transformers' convert_ids_to_tokens. */
  idToToken(id: number): string | undefined
  tokenToId(token: string): number | undefined
  segmentCacheStats(): SegmentCacheStats
}

export interface SimTokenizerOptions {
  /** Characters of text segments whose ids are kept (0: no cache). */
  segmentCacheChars?: number
}

const specialTokenKeys = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const

/**
 * transformers' slow/fast Llama and Gemma tokenizers rebuild the post-processor from
 * tokenizer_config's add_bos_token and add_eos_token (update_post_processor), whatever
 * tokenizer.json says; other classes keep tokenizer.json's.
 */
const postProcessorFromConfig = /^(Llama|CodeLlama|Gemma)Tokenizer(Fast)?$/

export function createSimTokenizer(
  files: ModelFiles,
  options: SimTokenizerOptions = {},
): SimTokenizer {
  const config = files.tokenizerConfig
  const hf = new HfTokenizer(files.tokenizerJson, config)
  const vocabulary = hf.get_vocab(true)
  let vocabSize = 0
  for (const id of vocabulary.values()) vocabSize = Math.max(vocabSize, id + 1)
  const idOf = (token: string | null) => (token === null ? undefined : vocabulary.get(token))
  const specialTokens = specialTokensMap(config)
  const eosTokenId = idOf(tokenText(config.eos_token)) ?? firstId(files.generationConfig)
  if (eosTokenId === undefined)
    throw new KinfError('invalid_config', `tokenizer ${files.source}: no eos_token`)
  const bosTokenId = idOf(tokenText(config.bos_token)) ?? null
  const encodeText = createSegmentEncoder(files, hf, options.segmentCacheChars ?? 4_000_000)
  const rebuilt = postProcessorFromConfig.test(String(config.tokenizer_class ?? ''))
  return {
    vocabSize,
    eosTokenId,
    specialTokens,
    encode(text, encodeOptions = {}) {
      if (!encodeOptions.addSpecialTokens) return encodeText.encode(text)
      if (!rebuilt) return hf.encode(text, { add_special_tokens: true }).ids
      const ids = encodeText.encode(text)
      if (config.add_bos_token !== false && bosTokenId !== null) ids.unshift(bosTokenId)
      if (config.add_eos_token === true) ids.push(eosTokenId)
      return ids
    },
    decode: (ids, decodeOptions = {}) =>
      ids.length === 0
        ? ''
        : hf.decode([...ids], { skip_special_tokens: decodeOptions.skipSpecialTokens === true }),
    idToToken: (id) => hf.id_to_token(id),
    tokenToId: (token) => vocabulary.get(token),
    segmentCacheStats: () => encodeText.stats(),
  }
}

/** A special token of tokenizer_config: a string or an AddedToken dict. */
export function tokenText(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'object' && value !== null && 'content' in value) {
    const content = (value as { content: unknown }).content
    return typeof content === 'string' ? content : null
  }
  return null
}

function specialTokensMap(config: Record<string, unknown>): Record<string, unknown> {
  const map: Record<string, unknown> = {}
  for (const key of specialTokenKeys) {
    const text = tokenText(config[key])
    if (text !== null) map[key] = text
  }
  const additional = config.additional_special_tokens
  if (Array.isArray(additional) && additional.length > 0)
    map.additional_special_tokens = additional.map(tokenText).filter((t) => t !== null)
  return map
}

function firstId(generationConfig: Record<string, unknown> | null): number | undefined {
  const eos = generationConfig?.eos_token_id
  const first = Array.isArray(eos) ? eos[0] : eos
  return typeof first === 'number' ? first : undefined
}
