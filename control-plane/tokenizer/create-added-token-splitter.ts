import type { AddedTokenJson } from './read-tokenizer-files.ts'
import { whitespaceCharacter } from './to-oniguruma-regexp.ts'

/** A piece of text: either one added token (`<|im_start|>`, `<bos>`, ...) or the text between. */
export type TextPiece = { kind: 'added'; id: number } | { kind: 'text'; text: string; at: number }

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}

const wordCharacter = /^[\p{L}\p{N}_]$/u

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** The characters (code points, not halves of a surrogate pair) just before and after a range. */
function charBefore(text: string, at: number): string {
  if (
    at >= 2 &&
    isLowSurrogate(text.charCodeAt(at - 1)) &&
    isHighSurrogate(text.charCodeAt(at - 2))
  )
    return text.slice(at - 2, at)
  return text.slice(Math.max(0, at - 1), at)
}

function charAfter(text: string, at: number): string {
  const code = text.codePointAt(at)
  return code === undefined ? '' : String.fromCodePoint(code)
}

/**
 * Builds the first step of Hugging Face tokenization for one class of added tokens: cutting
 * the text at every occurrence, before any pre-tokenization. Matches are leftmost-longest,
 * as the Aho-Corasick matcher of `tokenizers` finds them (the alternation lists longer
 * tokens first). As there, a `single_word` token only counts between non-word characters,
 * and `lstrip`/`rstrip` tokens take the whitespace before/after them (Unicode White_Space,
 * Rust's `char::is_whitespace`). Text pieces carry their offset, which Metaspace's
 * `prepend_scheme: "first"` needs.
 */
export function createAddedTokenSplitter(
  tokens: readonly AddedTokenJson[],
): (text: string) => TextPiece[] {
  if (tokens.length === 0) return (text) => (text === '' ? [] : [{ kind: 'text', text, at: 0 }])
  const byContent = new Map(tokens.map((token) => [token.content, token]))
  const contents = [...byContent.keys()].sort((a, b) => b.length - a.length)
  const pattern = new RegExp(contents.map(escapeRegExp).join('|'), 'g')
  return (text) => {
    const pieces: TextPiece[] = []
    let last = 0
    pattern.lastIndex = 0
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const token = byContent.get(match[0]) as AddedTokenJson
      let start = match.index
      let stop = start + match[0].length
      if (token.single_word) {
        if (
          wordCharacter.test(charBefore(text, start)) ||
          wordCharacter.test(charAfter(text, stop))
        )
          continue
      }
      if (token.lstrip) {
        while (start > last && whitespaceCharacter.test(text[start - 1] as string)) start--
      }
      if (token.rstrip) {
        while (stop < text.length && whitespaceCharacter.test(text[stop] as string)) stop++
        pattern.lastIndex = stop
      }
      if (start > last) pieces.push({ kind: 'text', text: text.slice(last, start), at: last })
      pieces.push({ kind: 'added', id: token.id })
      last = stop
    }
    if (last < text.length) pieces.push({ kind: 'text', text: text.slice(last), at: last })
    return pieces
  }
}
