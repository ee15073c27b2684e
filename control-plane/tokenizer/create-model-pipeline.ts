import { tokenizers } from '@lenml/tokenizers'
import type { TokenizerJson } from './read-tokenizer-files.ts'
import { toOnigurumaRegExp } from './to-oniguruma-regexp.ts'

/**
 * What tokenizing the text between two added tokens takes, from a tokenizer.json: its
 * normalizer, pre-tokenizer and model, and the decoder for the way back. Built by
 * `@lenml/tokenizers` (a port of transformers.js), with the regular expressions of its
 * pre-tokenizers and normalizers compiled for Oniguruma's semantics, as the pod's
 * `tokenizers` runs them, and every Split behaviour of `tokenizers`.
 */
export interface ModelPipeline {
  normalize: (text: string) => string
  /** `atStart`: the text begins the input (Metaspace's prepend_scheme "first" reads it). */
  preTokenize: (text: string, atStart: boolean) => string[]
  /** Words to vocabulary tokens (BPE, WordPiece or Unigram). */
  model: (words: string[]) => string[]
  /** Token to id, added tokens included. */
  vocabulary: ReadonlyMap<string, number>
  /** Id to token; its length is the number of ids. */
  tokens: readonly (string | undefined)[]
  /** Hugging Face `decode` (no clean-up of spaces, as `tokenizers` decodes). */
  decode: (ids: readonly number[], skipSpecialTokens: boolean) => string
  /** Whether a segment's tokens depend on whether it starts the text. */
  readonly positionDependent: boolean
}

type Callable<A extends unknown[], R> = ((...args: A) => R) & Record<string, unknown>

/** The parts of a lenml PreTrainedTokenizer read here (its types declare them loosely). */
interface LenmlTokenizer {
  normalizer: Callable<[string], string> | null
  pre_tokenizer: Callable<[string | string[], { section_index?: number }?], string[]> | null
  model: Callable<[string[]], string[]> & {
    tokens_to_ids: Map<string, number>
    vocab: (string | undefined)[]
  }
  decode_single(
    ids: number[],
    options: { skip_special_tokens: boolean; clean_up_tokenization_spaces: boolean },
  ): string
}

type Config = Record<string, unknown> & { type?: unknown }
type Piece = { text: string; delimiter: boolean }

const gpt2Pattern =
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}

function patternOf(config: Config): RegExp {
  const pattern = config.pattern as { Regex?: string; String?: string }
  if (typeof pattern?.Regex === 'string') return toOnigurumaRegExp(pattern.Regex)
  if (typeof pattern?.String === 'string') return new RegExp(escapeRegExp(pattern.String), 'gu')
  throw new Error(`${String(config.type)}: a pattern needs "Regex" or "String"`)
}

/**
 * `tokenizers`' Split (pre_tokenizers/split.rs, split in normalizer.rs): the matches are
 * the delimiters (the rest, with `invert`), kept as the behaviour says.
 */
function split(text: string, pattern: RegExp, behavior: string, invert: boolean): string[] {
  const pieces: Piece[] = []
  let last = 0
  for (const match of text.matchAll(pattern)) {
    if (match[0] === '') continue
    if (match.index > last) pieces.push({ text: text.slice(last, match.index), delimiter: invert })
    pieces.push({ text: match[0], delimiter: !invert })
    last = match.index + match[0].length
  }
  if (last < text.length) pieces.push({ text: text.slice(last), delimiter: invert })
  const out: string[] = []
  switch (behavior) {
    case 'Removed':
      return pieces.filter((piece) => !piece.delimiter).map((piece) => piece.text)
    case 'Isolated':
      return pieces.map((piece) => piece.text)
    case 'MergedWithPrevious':
    case 'Contiguous':
      for (const [i, piece] of pieces.entries()) {
        const previous = pieces[i - 1]?.delimiter ?? false
        const merges =
          behavior === 'Contiguous' ? piece.delimiter === previous : piece.delimiter && !previous
        if (merges && out.length > 0) out[out.length - 1] += piece.text
        else out.push(piece.text)
      }
      return out
    case 'MergedWithNext':
      for (let i = pieces.length - 1; i >= 0; i--) {
        const piece = pieces[i] as Piece
        const next = pieces[i + 1]?.delimiter ?? false
        if (piece.delimiter && !next && out.length > 0)
          out[out.length - 1] = piece.text + out.at(-1)
        else out.push(piece.text)
      }
      return out.reverse()
    default:
      throw new Error(`Split: unknown behavior ${behavior}`)
  }
}

/** Replaces lenml's JavaScript-regex pre-tokenizers by Oniguruma-faithful ones, recursively. */
function fixPreTokenizer(object: Record<string, unknown>, config: Config): boolean {
  let positionDependent = false
  if (config.type === 'Sequence') {
    const children = object.tokenizers as Record<string, unknown>[]
    const configs = config.pretokenizers as Config[]
    for (const [i, child] of children.entries())
      positionDependent = fixPreTokenizer(child, configs[i] as Config) || positionDependent
  } else if (config.type === 'Split') {
    const pattern = patternOf(config)
    const behavior = String(config.behavior ?? 'Isolated')
    const invert = config.invert === true
    object.pre_tokenize_text = (text: string) => split(text, pattern, behavior, invert)
  } else if (config.type === 'ByteLevel') {
    object.pattern = toOnigurumaRegExp(gpt2Pattern)
  } else if (config.type === 'Metaspace') {
    positionDependent = (config.prepend_scheme ?? 'always') === 'first'
  }
  return positionDependent
}

/** The same for normalizers whose Replace pattern is a regular expression. */
function fixNormalizer(object: Record<string, unknown>, config: Config): void {
  if (config.type === 'Sequence') {
    const children = object.normalizers as Record<string, unknown>[]
    const configs = config.normalizers as Config[]
    for (const [i, child] of children.entries()) fixNormalizer(child, configs[i] as Config)
  } else if (config.type === 'Replace') {
    const pattern = patternOf(config)
    const content = String(config.content ?? '')
    object.normalize = (text: string) => text.replaceAll(pattern, () => content)
  }
}

/** Builds the pipeline; throws (a plain Error) for a tokenizer.json lenml cannot build. */
export function createModelPipeline(json: TokenizerJson): ModelPipeline {
  // The base class, not the tokenizer_config's class: the pod runs tokenizer.json through
  // `tokenizers`, whatever slow-tokenizer quirks transformers' named classes emulate.
  const lenml = new tokenizers.PreTrainedTokenizer(json, {}) as unknown as LenmlTokenizer
  if (lenml.normalizer !== null && json.normalizer != null)
    fixNormalizer(lenml.normalizer, json.normalizer as Config)
  const positionDependent =
    lenml.pre_tokenizer !== null && json.pre_tokenizer != null
      ? fixPreTokenizer(lenml.pre_tokenizer, json.pre_tokenizer as Config)
      : false
  const { normalizer, pre_tokenizer: preTokenizer, model } = lenml
  return {
    normalize: normalizer === null ? (text) => text : (text) => normalizer(text),
    preTokenize:
      preTokenizer === null
        ? (text) => [text]
        : (text, atStart) => preTokenizer(text, { section_index: atStart ? 0 : 1 }),
    model: (words) => model(words),
    vocabulary: model.tokens_to_ids,
    tokens: model.vocab,
    decode: (ids, skipSpecialTokens) =>
      lenml.decode_single([...ids], {
        skip_special_tokens: skipSpecialTokens,
        clean_up_tokenization_spaces: false,
      }),
    positionDependent,
  }
}
