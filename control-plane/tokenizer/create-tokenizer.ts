import { loadTokenizer, type TokenizerOptionsInput } from './load-tokenizer.ts'
import type { Tokenizer } from './tokenizer.ts'

/**
 * The tokenizer of a source (a built-in name or a Hugging Face model directory), as
 * loadTokenizer loads it; throws its KinfError (invalid_config) when it cannot be loaded.
 */
export function createTokenizer(source: string, options: TokenizerOptionsInput = {}): Tokenizer {
  const loaded = loadTokenizer(source, options)
  if (!loaded.ok) throw loaded.error
  return loaded.tokenizer
}
