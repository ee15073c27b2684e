/** A piece of text: either one added token (`<|im_start|>`, `<think>`, ...) or the text between. */
export type TextPiece = { kind: 'added'; id: number } | { kind: 'text'; text: string }

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}

/**
 * Builds the first step of Hugging Face tokenization: cutting the raw text at every added
 * token, special or not, before any normalization or pre-tokenization. Matches are
 * leftmost-longest, as the Aho-Corasick matcher of `tokenizers` finds them: the regex
 * alternation lists longer tokens first. Every added token of Qwen3 is `normalized: false`
 * without `lstrip`/`rstrip`/`single_word`, so matching on the raw text is all there is.
 */
export function createAddedTokenSplitter(
  addedTokens: ReadonlyMap<string, number>,
): (text: string) => TextPiece[] {
  const contents = [...addedTokens.keys()].sort((a, b) => b.length - a.length)
  const pattern = new RegExp(contents.map(escapeRegExp).join('|'), 'g')
  return (text) => {
    const pieces: TextPiece[] = []
    let last = 0
    for (const match of text.matchAll(pattern)) {
      if (match.index > last) pieces.push({ kind: 'text', text: text.slice(last, match.index) })
      pieces.push({ kind: 'added', id: addedTokens.get(match[0]) as number })
      last = match.index + match[0].length
    }
    if (last < text.length) pieces.push({ kind: 'text', text: text.slice(last) })
    return pieces
  }
}
