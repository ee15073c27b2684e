import {
  createStableVocabulary,
  type StableVocabulary,
} from '../tokenizer/create-stable-vocabulary.ts'
import { createTokenizer } from '../tokenizer/create-tokenizer.ts'
import type { Tokenizer } from '../tokenizer/tokenizer.ts'

/** What a simulated pod needs that is expensive to build and can be shared by pods. */
export interface SimModelAssets {
  tokenizer: Tokenizer
  vocabulary: StableVocabulary
}

/**
 * The tokenizer and output vocabulary, built once and shared by every pod of a process.
 * Apart from its pods' servers and sockets: the discrete-event benchmark loads this alone.
 */
export function loadSimModelAssets(): SimModelAssets {
  const tokenizer = createTokenizer('qwen3')
  return { tokenizer, vocabulary: createStableVocabulary(tokenizer) }
}
