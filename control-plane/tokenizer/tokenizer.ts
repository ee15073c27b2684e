import type { ChatMessage } from '../../shared/openai/chat-completion-request.ts'
import type { RenderOptions } from './create-chat-template-renderer.ts'
import type { LruCacheStats } from './lru-cache.ts'

export type TokenizerName = 'qwen3'

export interface EncodeOptions {
  /**
   * Hugging Face's `add_special_tokens`. Qwen3's post-processor adds none (no BOS, no
   * EOS), so the ids are the same either way; the option is here for the HF signature.
   */
  addSpecialTokens?: boolean
}

export interface DecodeOptions {
  /** Leaves out the special added tokens (`<|im_end|>`, ...), not `<think>` and `</think>`. */
  skipSpecialTokens?: boolean
}

export interface ChatTemplateOptions extends RenderOptions {
  /**
   * vLLM's `continue_final_message`: the prompt ends inside the final message, with no
   * end-of-turn, so the model continues it (an assistant prefill). As transformers does
   * it: the rendered text is cut after the last occurrence of that message's stripped
   * content. Needs `addGenerationPrompt: false`.
   */
  continueFinalMessage?: boolean
}

export interface ChatPrompt {
  /** The rendered chat template. */
  text: string
  /** `text` tokenized without adding special tokens: the prompt ids vLLM runs. */
  tokenIds: number[]
}

/** Ids of the tokens the chat format is made of, looked up in the vocabulary. */
export interface ChatTokenIds {
  /** `<|endoftext|>`, also the padding token. */
  endOfText: number
  /** `<|im_start|>`, opens every turn. */
  imStart: number
  /** `<|im_end|>`, closes every turn; the EOS token. */
  imEnd: number
  /** `<think>` and `</think>`: added but not special. */
  thinkStart: number
  thinkEnd: number
  /** `<tool_call>` and `</tool_call>`: added but not special. */
  toolCallStart: number
  toolCallEnd: number
}

/** A tokenizer that gives the ids a vLLM pod serving the model computes. */
export interface Tokenizer {
  readonly name: TokenizerName
  /** `<|im_end|>`: what a Qwen3 chat turn ends with, the id a generation stops on. */
  readonly eosTokenId: number
  readonly padTokenId: number
  /**
   * Number of ids the tokenizer knows, added tokens included (151,669 for Qwen3). The
   * model's embedding table is larger (151,936); the ids past this one never come out.
   */
  readonly vocabSize: number
  readonly chatTokenIds: ChatTokenIds
  /** Like Hugging Face `tokenizer.encode`: added-token strings in `text` become their ids. */
  encode(text: string, options?: EncodeOptions): number[]
  /** Like Hugging Face `tokenizer.decode`; invalid UTF-8 comes out as U+FFFD. */
  decode(ids: readonly number[], options?: DecodeOptions): string
  /**
   * What vLLM does for `/v1/chat/completions`: normalize the messages, render the chat
   * template, tokenize the text without adding special tokens. Throws `KinfError`
   * `invalid_request` for messages vLLM would reject or this model cannot take.
   */
  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatTemplateOptions): ChatPrompt
  /** Hits, misses and size of the cache of text segments between added tokens. */
  segmentCacheStats(): LruCacheStats
}
