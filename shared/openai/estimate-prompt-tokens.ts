/**
 * A tokenizer-free estimate of a prompt's length, for quotas and policy at the edge, where
 * the model's real tokenizer (megabytes of vocabulary) does not fit. It counts the pieces
 * a GPT/Qwen-style pre-tokenizer would split the text into (words with their leading
 * space or symbol, single digits, runs of punctuation, whitespace) and adds one token per 4
 * characters beyond the first 5 of a long piece, as BPE splits rare long words. Against
 * Qwen3's tokenizer: 0.95 of the count over the PII corpus (0.78 to 1.08 per sample, p10
 * to p90), 1.00 on TypeScript, 0.97 on Markdown. The scorer's exact count replaces it
 * whenever the scorer is asked.
 */
export function estimatePromptTokens(text: string): number {
  let tokens = 0
  const pieces = text.matchAll(
    /[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+/gu,
  )
  for (const [piece] of pieces) tokens += 1 + Math.floor(Math.max(0, piece.length - 5) / 4)
  return tokens
}
