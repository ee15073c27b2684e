import { toByteLevel } from './to-byte-level.ts'

export interface SegmentEncoderParts {
  /** The pre-tokenizer split pattern, global and Unicode (see `toOnigurumaRegExp`). */
  splitPattern: RegExp
  /** Byte-pair encoding of byte-level words into vocabulary tokens. */
  bpe: (words: string[]) => string[]
  vocabulary: ReadonlyMap<string, number>
}

/**
 * Builds the encoder for text that holds no added token, following the pipeline of the
 * Qwen2/Qwen3 `tokenizer.json`: NFC normalization, the Split pre-tokenizer in "Isolated"
 * mode (matches and the text between them are both kept as words), the byte-level
 * mapping of each word, then BPE. Words never merge across each other, which is why a
 * cache of segments (or words) gives the same ids as encoding the whole text.
 *
 * `String.prototype.normalize` uses Node's Unicode 17 tables, the pod's Rust crates
 * Unicode 16: text with characters new in Unicode 17 (say combining marks that NFC now
 * reorders) can differ. Everything older matches (see the Hugging Face parity tests).
 */
export function createSegmentEncoder(parts: SegmentEncoderParts): (segment: string) => number[] {
  const { splitPattern, bpe, vocabulary } = parts
  const toId = (token: string): number => {
    const id = vocabulary.get(token)
    if (id === undefined)
      throw new Error(`BPE produced a token missing from the vocabulary: ${token}`)
    return id
  }
  return (segment) => {
    const normalized = segment.normalize('NFC')
    const words: string[] = []
    let last = 0
    for (const match of normalized.matchAll(splitPattern)) {
      if (match.index > last) words.push(toByteLevel(normalized.slice(last, match.index)))
      if (match[0].length > 0) words.push(toByteLevel(match[0]))
      last = match.index + match[0].length
    }
    if (last < normalized.length) words.push(toByteLevel(normalized.slice(last)))
    return words.length === 0 ? [] : bpe(words).map(toId)
  }
}
