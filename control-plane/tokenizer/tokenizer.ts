import type { ChatTemplateOptions } from './create-chat-template-renderer.ts'
import type { MmFeature } from './create-image-expander.ts'
import type { LruCacheStats } from './lru-cache.ts'

/**
 * A tokenizer source: a built-in name (shared/crd/builtin-tokenizers.ts) or the path of a
 * Hugging Face model directory. Kept as a name for the callers that typed it.
 */
export type TokenizerName = string

export interface EncodeOptions {
  /**
   * Hugging Face's `add_special_tokens` (default true, as in transformers): what the
   * post-processor adds, such as Llama's BOS. vLLM adds them to a completions prompt,
   * never to a rendered chat prompt.
   */
  addSpecialTokens?: boolean
}

export interface DecodeOptions {
  /** Leaves out the added tokens marked special (`<|im_end|>`, ...), not the others. */
  skipSpecialTokens?: boolean
}

export type { ChatTemplateOptions, MmFeature }

export interface ChatPromptOptions extends ChatTemplateOptions {
  /**
   * vLLM's add_special_tokens of a chat request (default false): what the post-processor
   * adds (a BOS) on top of what the template renders.
   */
  addSpecialTokens?: boolean
}

export interface ChatPrompt {
  /** The rendered chat template (an image still its placeholder, as vLLM's prompt text). */
  text: string
  /**
   * The prompt ids vLLM runs: `text` tokenized without adding special tokens (unless
   * asked), each image's placeholder first expanded as the model's processor expands it.
   */
  tokenIds: number[]
  /**
   * Present when the chat holds images: the placeholder range of each one the client
   * identified with a `uuid`, which vLLM hashes into the blocks holding it (see
   * createImageExpander; an image without a uuid is left out, so those blocks never match).
   */
  mmFeatures?: MmFeature[]
}

/** A tokenizer that gives the ids a vLLM pod serving the model computes. */
export interface Tokenizer {
  /** The source it was loaded from: a built-in name or a model directory's path. */
  readonly name: string
  /** tokenizer_config.json's eos_token: the id a chat turn ends with. */
  readonly eosTokenId: number
  /** Every id generation stops on: generation_config.json's eos_token_id, else eosTokenId. */
  readonly eosTokenIds: readonly number[]
  readonly padTokenId: number | null
  readonly bosTokenId: number | null
  /**
   * Number of ids the tokenizer knows, added tokens included (151,669 for Qwen3). The
   * model's embedding table may be larger; the ids past this one never come out.
   */
  readonly vocabSize: number
  /** Like Hugging Face `tokenizer.encode`: added-token strings in `text` become their ids. */
  encode(text: string, options?: EncodeOptions): number[]
  /** Like Hugging Face `tokenizer.decode`; invalid UTF-8 comes out as U+FFFD. */
  decode(ids: readonly number[], options?: DecodeOptions): string
  /**
   * What vLLM does for `/v1/chat/completions`: normalize the messages, render the chat
   * template, tokenize the text without adding special tokens. Image parts are taken
   * only by a model with an image processor (Gemma 3's layout, see createImageExpander);
   * for any other model they are refused, as vLLM refuses them. Throws `KinfError`
   * `invalid_request` for messages vLLM would reject or the template refuses.
   */
  applyChatTemplate(messages: readonly unknown[], options?: ChatPromptOptions): ChatPrompt
  /** Hits, misses and size of the cache of text segments between added tokens. */
  segmentCacheStats(): LruCacheStats
}
