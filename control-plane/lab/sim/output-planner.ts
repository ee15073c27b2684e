import type { StableVocabulary } from '../../../shared/tokens/create-stable-vocabulary.ts'
import type { FinishReason } from './engine/vllm-engine.ts'

export interface PlannedOutput {
  tokenIds: number[]
  finishReason: FinishReason
  /** Text of each token as the client sees it (the stop token has none). */
  pieces: string[]
}

export interface OutputRequest {
  maxTokens: number
  minTokens: number
  ignoreEos: boolean
}

/**
 * Decides what the "model" says: words from a vocabulary whose tokens survive a round
 * trip through text (so the next turn of a conversation hits the prefix cache as it
 * would on vLLM), and a length that is exact when the client sets ignore_eos, else drawn
 * from a seeded log-normal (median 200 tokens) and ended by the EOS token, as a model
 * that stops by itself would.
 */
export function createOutputPlanner(
  vocabulary: StableVocabulary,
  eosTokenId: number,
  random: () => number,
) {
  const words = vocabulary.words
  const naturalLength = () => {
    const u = Math.max(random(), Number.MIN_VALUE)
    const gaussian = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
    return Math.max(1, Math.round(Math.exp(Math.log(200) + 0.8 * gaussian)))
  }
  return (request: OutputRequest): PlannedOutput => {
    const natural = request.ignoreEos
      ? Number.POSITIVE_INFINITY
      : Math.max(request.minTokens + 1, naturalLength())
    const stops = natural <= request.maxTokens
    const count = stops ? natural : request.maxTokens
    const wordCount = stops ? count - 1 : count
    const indices = Array.from({ length: wordCount }, () => Math.floor(random() * words.length))
    const tokenIds = vocabulary.toOutputIds(indices)
    const pieces = indices.map((index, i) => {
      const word = words[index]?.word ?? ''
      return i === 0 ? word : ` ${word}`
    })
    if (stops) {
      tokenIds.push(eosTokenId)
      pieces.push('')
    }
    return { tokenIds, finishReason: stops ? 'stop' : 'length', pieces }
  }
}
