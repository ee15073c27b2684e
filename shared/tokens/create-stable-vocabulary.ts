import { z } from 'zod'
import { parseOptions } from '../config/parse-options.ts'

/**
 * What the vocabulary needs of a tokenizer: ids without special tokens added, and their
 * text. The simulator's model and the router's tokenizer both are one.
 */
export interface VocabularyTokenizer {
  /** Ids below this are scanned. */
  readonly vocabSize: number
  encode(text: string): number[]
  decode(ids: readonly number[]): string
}

/** One word of the stable vocabulary and its two single-token spellings. */
export interface StableWord {
  /** Lower-case ASCII letters, at least one vowel, 2 to 12 letters. */
  word: string
  /** The token of `" " + word`, used everywhere but at the start of a text. */
  id: number
  /** The token of `word` without the space, used for the first word of a text. */
  initialId: number
}

export interface StableVocabulary {
  readonly words: readonly StableWord[]
  /**
   * The ids of a generated text made of the given words (indices into `words`): the
   * first word without a leading space, the others with one, so the text reads
   * "the model is ..." and `encode(decode(ids))` gives the same ids back.
   */
  toOutputIds(wordIndices: readonly number[]): number[]
}

export const StableVocabularyOptions = z.strictObject({
  size: z
    .int({ error: 'must be a positive integer' })
    .min(1, { error: 'must be a positive integer' })
    .default(2048)
    .describe('How many words; Qwen3 has 6,753 that qualify'),
})
export type StableVocabularyOptions = z.infer<typeof StableVocabularyOptions>
export type StableVocabularyOptionsInput = z.input<typeof StableVocabularyOptions>

function parseStableVocabularyOptions(
  input: StableVocabularyOptionsInput,
): StableVocabularyOptions {
  return parseOptions(StableVocabularyOptions, input, 'stable vocabulary')
}

const wordPattern = /^[a-z]{2,12}$/
const vowel = /[aeiouy]/

function singleToken(tokenizer: VocabularyTokenizer, text: string): number | undefined {
  const ids = tokenizer.encode(text)
  return ids.length === 1 ? ids[0] : undefined
}

/**
 * Picks a deterministic list of words that a simulated model can emit as output tokens
 * and get back unchanged when the client sends the text in the next request.
 *
 * Scanning ids in increasing order (lower ids are earlier BPE merges, so common words
 * come first), a word qualifies when `" " + word` and `word` each encode to one token
 * that decodes back to them. Any sequence then round-trips: the pre-tokenizer splits the
 * text into exactly those words (each a run of letters with at most one space before
 * it), and BPE never merges across words.
 *
 * In a chat template (Qwen3's, for example): vLLM's prompt for a turn ends with `<|im_start|>assistant\n`
 * (Qwen3 with `enable_thinking` unset or true adds nothing after it). When the client
 * sends the generated text back as the assistant message of the next request, Qwen3's
 * template renders it as `<|im_start|>assistant\n` + content + `<|im_end|>\n` (history
 * turns lose only a `<think>` block, which these words never form), and the "\n" before
 * the content is its own pre-token, so the next prompt's ids begin with
 * `previousPromptIds ++ outputIds ++ [<|im_end|>, "\n"]`: the output ids, and the
 * `<|im_end|>` the model stopped on, reappear at the same positions.
 *
 * With `enable_thinking: false` the prompt ends in `<think>\n\n</think>\n\n`, which the
 * template does not render for history turns: the next prompt then shares only
 * `previousPromptIds` minus those 4 tokens, and none of the output.
 */
export function createStableVocabulary(
  tokenizer: VocabularyTokenizer,
  input: StableVocabularyOptionsInput = {},
): StableVocabulary {
  const { size } = parseStableVocabularyOptions(input)
  const words: StableWord[] = []
  for (let id = 0; id < tokenizer.vocabSize && words.length < size; id++) {
    const spaced = tokenizer.decode([id])
    const word = spaced.slice(1)
    if (spaced[0] !== ' ' || !wordPattern.test(word) || !vowel.test(word)) continue
    if (singleToken(tokenizer, spaced) !== id) continue
    const initialId = singleToken(tokenizer, word)
    if (initialId === undefined || tokenizer.decode([initialId]) !== word) continue
    words.push({ word, id, initialId })
  }
  if (words.length < size) {
    throw new RangeError(`the vocabulary has only ${words.length} stable words, asked for ${size}`)
  }
  return {
    words,
    toOutputIds: (wordIndices) =>
      wordIndices.map((index, position) => {
        const entry = words[index]
        if (entry === undefined) throw new RangeError(`no stable word at index ${index}`)
        return position === 0 ? entry.initialId : entry.id
      }),
  }
}
