import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { createAddedTokenSplitter } from './create-added-token-splitter.ts'
import { createChatTemplateRenderer } from './create-chat-template-renderer.ts'
import { createSegmentEncoder } from './create-segment-encoder.ts'
import { loadQwen3Files, type TokenizerFiles } from './load-qwen3-files.ts'
import { LruCache } from './lru-cache.ts'
import { parseChatMessages, type TemplateMessage } from './parse-chat-messages.ts'
import { renderQwen3Chat } from './render-qwen3-chat.ts'
import { fromByteLevel } from './to-byte-level.ts'
import type { ChatTokenIds, DecodeOptions, Tokenizer, TokenizerName } from './tokenizer.ts'
import { pythonRstrip, pythonStrip } from './use-python-strip.ts'

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
})
export type TokenizerOptions = z.infer<typeof TokenizerOptions>
export type TokenizerOptionsInput = z.input<typeof TokenizerOptions>

function parseTokenizerOptions(input: TokenizerOptionsInput): TokenizerOptions {
  return parseOptions(TokenizerOptions, input, 'tokenizer')
}

const loaders: Record<TokenizerName, () => TokenizerFiles> = { qwen3: loadQwen3Files }

function idOf(files: TokenizerFiles, token: string): number {
  const id = files.vocabulary.get(token)
  if (id === undefined) throw new Error(`the tokenizer has no token ${token}`)
  return id
}

function createDecoder(files: TokenizerFiles) {
  const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })
  return (ids: readonly number[], options: DecodeOptions = {}): string => {
    const parts: Uint8Array[] = []
    let length = 0
    for (const id of ids) {
      const token = Number.isInteger(id) ? files.tokens[id] : undefined
      if (token === undefined) {
        throw new KinfError('invalid_request', `token id ${id} is not in the vocabulary`)
      }
      if (options.skipSpecialTokens === true && files.specialIds.has(id)) continue
      const bytes = fromByteLevel(token)
      parts.push(bytes)
      length += bytes.length
    }
    const all = new Uint8Array(length)
    let at = 0
    for (const bytes of parts) {
      all.set(bytes, at)
      at += bytes.length
    }
    return utf8.decode(all)
  }
}

/**
 * Creates the tokenizer of a model as its vLLM pod runs it. Text is first cut at the
 * added tokens; the segments between them are encoded independently (no pre-tokenizer
 * match and no BPE merge crosses an added token), so their ids are cached: a long system
 * prompt shared by many requests is encoded once.
 */
export function createTokenizer(name: TokenizerName, input: TokenizerOptionsInput = {}): Tokenizer {
  const options = parseTokenizerOptions(input)
  const load = loaders[name]
  if (load === undefined) throw new KinfError('invalid_config', `unknown tokenizer "${name}"`)
  const files = load()
  const split = createAddedTokenSplitter(files.addedTokens)
  const encodeSegment = createSegmentEncoder(files)
  const render = createChatTemplateRenderer(files.chatTemplate, files.specialTokensMap)
  const cache = new LruCache<string, readonly number[]>({
    maxEntries: options.segmentCache.maxEntries,
    maxWeight: options.segmentCache.maxChars,
    weigh: (segment) => segment.length,
  })

  const encode = (text: string): number[] => {
    if (typeof text !== 'string') throw new KinfError('invalid_request', 'text must be a string')
    // Segment ids are gathered first and copied once: a long cached system prompt is
    // thousands of ids, and growing the result by push() dominated a warm encode.
    const parts: (readonly number[] | number)[] = []
    let total = 0
    for (const piece of split(text)) {
      if (piece.kind === 'added') {
        parts.push(piece.id)
        total++
        continue
      }
      let segmentIds = cache.get(piece.text)
      if (segmentIds === undefined) {
        segmentIds = encodeSegment(piece.text)
        cache.set(piece.text, segmentIds)
      }
      parts.push(segmentIds)
      total += segmentIds.length
    }
    const ids = new Array<number>(total)
    let at = 0
    for (const part of parts) {
      if (typeof part === 'number') ids[at++] = part
      else for (let i = 0; i < part.length; i++) ids[at++] = part[i] as number
    }
    return ids
  }

  const chatTokenIds: ChatTokenIds = {
    endOfText: idOf(files, '<|endoftext|>'),
    imStart: idOf(files, '<|im_start|>'),
    imEnd: idOf(files, '<|im_end|>'),
    thinkStart: idOf(files, '<think>'),
    thinkEnd: idOf(files, '</think>'),
    toolCallStart: idOf(files, '<tool_call>'),
    toolCallEnd: idOf(files, '</tool_call>'),
  }

  return {
    name,
    eosTokenId: idOf(files, files.eosToken),
    padTokenId: idOf(files, files.padToken),
    vocabSize: files.tokens.length,
    chatTokenIds,
    encode: (text) => encode(text),
    decode: createDecoder(files),
    applyChatTemplate: (messages, chatOptions = {}) => {
      const { continueFinalMessage = false, ...renderOptions } = chatOptions
      if (continueFinalMessage && (renderOptions.addGenerationPrompt ?? true)) {
        throw new KinfError(
          'invalid_request',
          'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
          { param: 'continue_final_message' },
        )
      }
      const parsed = parseChatMessages(messages)
      const rendered =
        (name === 'qwen3' ? renderQwen3Chat(parsed, renderOptions) : null) ??
        render(parsed, renderOptions)
      const text = continueFinalMessage ? openFinalMessage(rendered, parsed) : rendered
      return { text, tokenIds: encode(text) }
    },
    segmentCacheStats: () => cache.stats(),
  }
}

/**
 * transformers' `continue_final_message`: the rendered chat cut after the last occurrence
 * of the final message's stripped content, trailing whitespace dropped, so the turn stays
 * open. A template that does not print the content verbatim cannot be continued.
 */
function openFinalMessage(rendered: string, messages: readonly TemplateMessage[]): string {
  const final = pythonStrip(messages[messages.length - 1]?.content ?? '')
  const at = rendered.lastIndexOf(final)
  if (at < 0) {
    throw new KinfError(
      'invalid_request',
      'continue_final_message: the chat template does not render the final message as sent',
      { param: 'continue_final_message' },
    )
  }
  return pythonRstrip(rendered.slice(0, at + final.length))
}
