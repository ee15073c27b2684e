import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import type { StableVocabulary } from '../../../../shared/tokens/create-stable-vocabulary.ts'
import type { ChatFrame } from '../chat-prompt-ids.ts'
import { randomWords, type Workload } from '../workload.ts'
import { type MooncakeRequest, mooncakeBlockTokens } from './parse-mooncake-trace.ts'

export interface TraceWorkloadOptions {
  seed: number
  vocabulary: StableVocabulary
  /** The chat template's frame: its tokens count against the context. */
  frame: ChatFrame
  /** The model's context (GpuProfile model.maxModelLen). */
  maxModelLen: number
  /** The slice: requests [offset, offset + maxRequests) of the trace. */
  offset: number
  maxRequests: number
}

/**
 * A Mooncake trace as a workload: one single-turn conversation per request of the slice
 * that fits the context, in trace order. Each request is one user message (no system
 * prefix) whose content is its hash ids' blocks, each 512 stable words drawn from
 * (seed, hash id) alone, the last one cut to input_length (a prefix of the same block);
 * tokens past the hash ids' coverage are unique to the request. So requests sharing
 * leading hash ids share those tokens, and so vLLM's blocks, shifted alike by the
 * template's fixed header. The template adds its frame (a few tokens) to every prompt: a
 * request whose prompt with it reaches the context, or whose prompt and output exceed
 * it, is skipped (vLLM would refuse it) and counted. Timestamps are rebased to the
 * slice's first request, skipped or not.
 */
export function createTraceWorkload(
  trace: readonly MooncakeRequest[],
  options: TraceWorkloadOptions,
): Workload {
  if (options.offset >= trace.length)
    throw new KinfError(
      'invalid_request',
      `trace offset ${options.offset} is past the trace's ${trace.length} requests`,
    )
  const slice = trace.slice(options.offset, options.offset + options.maxRequests)
  const base = slice[0]?.timestamp ?? 0
  const { frame, maxModelLen } = options
  const templateTokens = frame.open.user.length + frame.close.length + frame.generation.length
  const kept: { request: MooncakeRequest; line: number }[] = []
  slice.forEach((request, i) => {
    const prompt = request.input_length + templateTokens
    if (prompt < maxModelLen && prompt + request.output_length <= maxModelLen)
      kept.push({ request, line: options.offset + i })
  })
  const initialOf = new Map(options.vocabulary.words.map((word) => [word.id, word.initialId]))
  const words = (count: number, key: number) => {
    // Injective in key, so no two blocks share a generator state; drop the first word
    // (randomWords spells it without a space) so blocks join into plain text.
    const random = createSeededRandom((Math.imul(key, 0x9e3779b1) + options.seed) >>> 0)
    return randomWords(options.vocabulary, count + 1, random).slice(1)
  }
  return {
    turns: 1,
    size: kept.length,
    skipped: slice.length - kept.length,
    fanOut: null,
    timestampsMs: kept.map(({ request }) => request.timestamp - base),
    conversation(index) {
      const entry = kept[index]
      if (!entry)
        throw new KinfError('internal', `the trace slice has no request ${index} (${kept.length})`)
      const { request, line } = entry
      const ids: number[] = []
      for (let start = 0; start < request.input_length; start += mooncakeBlockTokens) {
        const block = start / mooncakeBlockTokens
        const hash = request.hash_ids[block]
        const length = Math.min(mooncakeBlockTokens, request.input_length - start)
        // Past the hash ids: the rest of the prompt, this request's alone.
        const part =
          hash === undefined
            ? words(request.input_length - start, 2 * line + 1)
            : words(mooncakeBlockTokens, 2 * hash).slice(0, length)
        for (const id of part) ids.push(id)
        if (hash === undefined) break
      }
      ids[0] = initialOf.get(ids[0] as number) ?? (ids[0] as number)
      return { index, prefix: null, turns: [{ userIds: ids, outputTokens: request.output_length }] }
    },
  }
}
