import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import type { StableVocabulary } from '../../../shared/tokens/create-stable-vocabulary.ts'
import { type DataSpec, type FanOutSpec, lengthSampler } from './data-spec.ts'

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

/** What the benchmark sends: synthetic data (createWorkload) or a trace replay. */
export interface Workload {
  /** Turns per conversation (1 for a trace). */
  readonly turns: number
  /** Conversations there are (a trace slice's requests); null when they never run out. */
  readonly size: number | null
  /** Requests of the data left out because they do not fit the model's context. */
  readonly skipped: number
  /** Sibling bursts, when the data has them (they shape open-loop arrivals). */
  readonly fanOut: FanOutSpec | null
  /** A trace's send times by conversation, ms from the first, at speed 1; null otherwise. */
  readonly timestampsMs: readonly number[] | null
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
 * live run over HTTP see the same token ids for the same seed. With fan_out, conversation
 * i belongs to burst ⌊i / size⌋, whose prefix is drawn from (seed, burst) alone.
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
  const fanOut = spec.fanOut ?? null
  return {
    turns: spec.turns,
    size: null,
    skipped: 0,
    fanOut,
    timestampsMs: null,
    conversation(index) {
      const random = createSeededRandom((seed * 0x9e3779b1 + index * 0x85ebca6b) >>> 0)
      let prefix: PlannedConversation['prefix'] = null
      if (fanOut !== null)
        prefix = burstPrefix(vocabulary, fanOut, seed, Math.floor(index / fanOut.size))
      else if (totalWeight > 0) {
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

/** A fan-out burst's own prefix: a function of (seed, burst) only. */
function burstPrefix(
  vocabulary: StableVocabulary,
  fanOut: FanOutSpec,
  seed: number,
  burst: number,
): NonNullable<PlannedConversation['prefix']> {
  const random = createSeededRandom(
    Math.imul(seed + 5, 0x9e3779b1) ^ Math.imul(burst + 1, 0xc2b2ae35),
  )
  return { key: `f${burst}`, ids: randomWords(vocabulary, fanOut.prefixTokens, random) }
}
