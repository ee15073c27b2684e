/**
 * A tokenizer-free estimate of a prompt's length, for quotas and policy at the edge, where
 * the model's real tokenizer (megabytes of vocabulary) does not fit. One pass over the
 * characters, counting the pieces a Qwen/GPT-style pre-tokenizer splits text into: a run
 * of letters with the one space or symbol before it, each digit, a run of symbols, a run of
 * whitespace not absorbed by the word after it; a long piece adds a token per 4 characters
 * beyond its first 5, as BPE splits rare long words; CJK and other wide scripts count a
 * token per character. Against Qwen3's tokenizer: 0.94 of the count over the PII corpus,
 * 0.99 on TypeScript, 0.92 on Markdown (test/shared/openai). The scorer's exact count
 * replaces it whenever the scorer is asked. A table-driven loop, not a regex: this runs on
 * every request.
 */
export function estimatePromptTokens(text: string): number {
  const kinds = classes
  let tokens = 0
  const n = text.length
  let i = 0
  while (i < n) {
    const start = i
    const kind = kinds[text.charCodeAt(i)]
    i++
    if (kind === digit || kind === wide) {
      tokens++
      continue
    }
    if (kind === space) {
      while (i < n && kinds[text.charCodeAt(i)] === space) i++
      // One plain space before a word or symbol belongs to it; anything more is a piece.
      if (i - start !== 1 || text.charCodeAt(start) !== 32 || i === n) tokens++
      else if (kinds[text.charCodeAt(i)] === digit) tokens++
      continue
    }
    if (kind === symbol) {
      while (i < n && kinds[text.charCodeAt(i)] === symbol) i++
      // A single symbol right before letters is their prefix ("(word", "_name").
      if (i - start === 1 && i < n && kinds[text.charCodeAt(i)] === letter)
        while (i < n && kinds[text.charCodeAt(i)] === letter) i++
      tokens += 1 + ((Math.max(0, i - start - 5) / 4) | 0)
      continue
    }
    while (i < n && kinds[text.charCodeAt(i)] === letter) i++
    const length = i - start + (start > 0 && text.charCodeAt(start - 1) === 32 ? 1 : 0)
    tokens += 1 + ((Math.max(0, length - 5) / 4) | 0)
  }
  return tokens
}

const letter = 0
const digit = 1
const space = 2
const symbol = 3
const wide = 4

/**
 * The class of every UTF-16 code unit, looked up inline (64 KiB, built once): CJK, kana,
 * hangul and beyond are about a token per character in Qwen's vocabulary; other non-ASCII
 * letters join words.
 */
const classes = new Uint8Array(65_536).map((_, code) => {
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90)) return letter
  if (code >= 48 && code <= 57) return digit
  if (code === 32 || code === 10 || code === 13 || code === 9) return space
  if (code < 128) return symbol
  return code >= 0x2e80 ? wide : letter
})
