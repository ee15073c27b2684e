import { createSeededRandom } from '../../shared/random/create-seeded-random.ts'
import type { StableVocabulary } from '../tokenizer/create-stable-vocabulary.ts'
import { type DataSpec, lengthSampler } from './data-spec.ts'

/** One turn: the new user message (content token ids) and how many tokens to generate. */
export interface PlannedTurn {
  userIds: number[]
  outputTokens: number
}

/** A conversation (one request when the spec has one turn), fully decided by its index. */
export interface PlannedConversation {
  index: number
  /** The shared prefix, sent as a system message; null without one. */
  prefix: { key: string; ids: readonly number[] } | null
  turns: PlannedTurn[]
}

export interface Workload {
  readonly spec: DataSpec
  conversation(index: number): PlannedConversation
}

/** Content ids of `count` random words: single tokens that survive a round trip through text. */
export function randomWords(
  vocabulary: StableVocabulary,
  count: number,
  random: () => number,
): number[] {
  // What toOutputIds gives for random indices, without the intermediate array: the
  // benchmark draws millions of these.
  const words = vocabulary.words
  const size = words.length
  const ids = new Array<number>(count)
  for (let i = 0; i < count; i++) {
    const word = words[Math.floor(random() * size)] as (typeof words)[number]
    ids[i] = i === 0 ? word.initialId : word.id
  }
  return ids
}

/**
 * GuideLLM's synthetic data over token ids: prefixes generated once per bucket, drawn per
 * conversation by bucket weight then uniformly; every turn's user text random words, so
 * no two requests share anything beyond the prefix (and, in a conversation, its
 * history). Words come from the stable vocabulary, one token each, so a DES run and a
 * live run over HTTP see the same token ids for the same seed.
 */
export function createWorkload(
  spec: DataSpec,
  seed: number,
  vocabulary: StableVocabulary,
): Workload {
  const prefixRandom = createSeededRandom(seed + 3)
  const prefixes = spec.prefixBuckets.map((bucket, b) =>
    Array.from({ length: bucket.count }, (_, p) => ({
      key: `b${b}p${p}`,
      ids: bucket.tokens > 0 ? randomWords(vocabulary, bucket.tokens, prefixRandom) : [],
    })),
  )
  const totalWeight = spec.prefixBuckets.reduce((sum, bucket) => sum + bucket.weight, 0)
  return {
    spec,
    conversation(index) {
      const random = createSeededRandom((seed * 0x9e3779b1 + index * 0x85ebca6b) >>> 0)
      let prefix: PlannedConversation['prefix'] = null
      if (totalWeight > 0) {
        let pick = random() * totalWeight
        let bucket = 0
        while (
          bucket < spec.prefixBuckets.length - 1 &&
          pick >= (spec.prefixBuckets[bucket]?.weight ?? 0)
        ) {
          pick -= spec.prefixBuckets[bucket]?.weight ?? 0
          bucket++
        }
        const choices = prefixes[bucket] ?? []
        const chosen = choices[Math.floor(random() * choices.length)]
        if (chosen && chosen.ids.length > 0) prefix = chosen
      }
      const prompt = lengthSampler(spec.promptTokens, random)
      const output = lengthSampler(spec.outputTokens, random)
      const firstPrompt = spec.firstPromptTokens
        ? lengthSampler(spec.firstPromptTokens, random)
        : prompt
      const firstOutput = spec.firstOutputTokens
        ? lengthSampler(spec.firstOutputTokens, random)
        : output
      const turns = Array.from({ length: spec.turns }, (_, turn) => ({
        userIds: randomWords(
          vocabulary,
          Math.max(1, (turn === 0 ? firstPrompt : prompt)()),
          random,
        ),
        outputTokens: Math.max(1, (turn === 0 ? firstOutput : output)()),
      }))
      return { index, prefix, turns }
    },
  }
}
