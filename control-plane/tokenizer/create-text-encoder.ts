import { KinfError } from '../../shared/errors/kinf-error.ts'
import { createAddedTokenSplitter, type TextPiece } from './create-added-token-splitter.ts'
import type { ModelPipeline } from './create-model-pipeline.ts'
import { LruCache, type LruCacheStats } from './lru-cache.ts'
import type { AddedTokenJson } from './read-tokenizer-files.ts'

export interface TextEncoderParts {
  pipeline: ModelPipeline
  addedTokens: readonly AddedTokenJson[]
  addSpecialTokens: (ids: number[]) => number[]
  cache: { maxEntries: number; maxChars: number }
}

export interface TextEncoder {
  encode(text: string, addSpecialTokens: boolean): number[]
  stats(): LruCacheStats
}

/** At most this many characters are tokenized at once; vLLM refuses far shorter prompts. */
export const maxTextLength = 64 * 1024 * 1024

/**
 * Hugging Face's encode, split where its segments are independent so they can be cached.
 *
 * As `tokenizers` does (AddedVocabulary::extract_and_normalize): the text is first cut at
 * the added tokens that match the raw text (`normalized: false`), each piece between them
 * is normalized, cut at the added tokens that match normalized text, pre-tokenized and
 * run through the model. No normalization, pre-token or merge crosses an added token, so
 * a piece's ids depend only on its text (and, for Metaspace's prepend_scheme "first", on
 * whether it starts the input): they are cached, and a long system prompt shared by many
 * requests is encoded once.
 */
export function createTextEncoder(parts: TextEncoderParts): TextEncoder {
  const { pipeline, addedTokens } = parts
  const splitRaw = createAddedTokenSplitter(addedTokens.filter((token) => !token.normalized))
  const normalizedTokens = addedTokens.filter((token) => token.normalized)
  const splitNormalized =
    normalizedTokens.length === 0 ? null : createAddedTokenSplitter(normalizedTokens)
  const cache = new LruCache<string, readonly number[]>({
    maxEntries: parts.cache.maxEntries,
    maxWeight: parts.cache.maxChars,
    weigh: (segment) => segment.length,
  })

  const toIds = (tokens: string[], out: number[]) => {
    for (const token of tokens) {
      const id = pipeline.vocabulary.get(token)
      // A token the model made but the vocabulary lacks has no id (no unk token): dropped.
      if (id !== undefined) out.push(id)
    }
  }
  const encodePiece = (text: string, atStart: boolean): number[] => {
    const out: number[] = []
    const normalized = pipeline.normalize(text)
    const pieces: TextPiece[] = splitNormalized?.(normalized) ?? [
      { kind: 'text', text: normalized, at: 0 },
    ]
    for (const piece of pieces) {
      if (piece.kind === 'added') out.push(piece.id)
      else if (piece.text !== '')
        toIds(pipeline.model(pipeline.preTokenize(piece.text, atStart && piece.at === 0)), out)
    }
    return out
  }
  const cachedPiece = (text: string, atStart: boolean): readonly number[] => {
    if (atStart && pipeline.positionDependent) return encodePiece(text, true)
    let ids = cache.get(text)
    if (ids === undefined) {
      ids = encodePiece(text, atStart)
      cache.set(text, ids)
    }
    return ids
  }

  return {
    encode(text, addSpecialTokens) {
      if (typeof text !== 'string') throw new KinfError('invalid_request', 'text must be a string')
      if (text.length > maxTextLength) {
        throw new KinfError(
          'invalid_request',
          `text of ${text.length} characters is longer than the tokenizer's limit (${maxTextLength})`,
        )
      }
      // Piece ids are gathered first and copied once: a long cached system prompt is
      // thousands of ids, and growing the result by push() dominated a warm encode.
      const chunks: (readonly number[] | number)[] = []
      let total = 0
      for (const piece of splitRaw(text)) {
        if (piece.kind === 'added') {
          chunks.push(piece.id)
          total++
          continue
        }
        const ids = cachedPiece(piece.text, piece.at === 0)
        chunks.push(ids)
        total += ids.length
      }
      const ids = new Array<number>(total)
      let at = 0
      for (const chunk of chunks) {
        if (typeof chunk === 'number') ids[at++] = chunk
        else for (let i = 0; i < chunk.length; i++) ids[at++] = chunk[i] as number
      }
      return addSpecialTokens ? parts.addSpecialTokens(ids) : ids
    },
    stats: () => cache.stats(),
  }
}
