import type { RequestStream, StreamRequest } from './request-stream.ts'

/** Prompt tokens a cache served, out of all prompt tokens of a stream. */
export interface HitCeiling {
  hitTokens: number
  promptTokens: number
  /** hitTokens ÷ promptTokens: comparable with a run's hit rate. */
  fraction: number
  /** Hit blocks ÷ every block a prompt touches, the last partial one included (trace terms). */
  blockFraction: number
}

/**
 * Blocks a lookup may hit: the prompt's full blocks, but never the block holding the last
 * prompt token, which vLLM always computes (docs/vllm-wire.md §2).
 */
export const lookupBlocks = (request: StreamRequest, blockSize: number): number =>
  Math.min(request.promptBlocks.length, Math.floor((request.promptTokens - 1) / blockSize))

/** The leading lookup blocks of `request` that `holds` (prefix semantics: stop at the first miss). */
export function leadingHits(
  request: StreamRequest,
  blockSize: number,
  holds: (key: number) => boolean,
): number {
  const limit = lookupBlocks(request, blockSize)
  let hits = 0
  while (hits < limit && holds(request.promptBlocks[hits] as number)) hits++
  return hits
}

/** Totals a run of per-request hit block counts into a ceiling. */
export function toHitCeiling(stream: RequestStream, hitBlocks: number): HitCeiling {
  const { blockSize, requests } = stream
  const promptTokens = requests.reduce((sum, r) => sum + r.promptTokens, 0)
  const touched = requests.reduce((sum, r) => sum + Math.ceil(r.promptTokens / blockSize), 0)
  const hitTokens = hitBlocks * blockSize
  return {
    hitTokens,
    promptTokens,
    fraction: promptTokens === 0 ? 0 : hitTokens / promptTokens,
    blockFraction: touched === 0 ? 0 : hitBlocks / touched,
  }
}

/**
 * The infinite-cache hit ceiling: the share of prompt tokens one cache that never evicts
 * would serve, requests in stream order. Only full blocks count, a block only if every
 * block before it matched, and the block of the last prompt token never. A property of
 * the stream alone: no router or pool reaches more.
 */
export function infiniteHitCeiling(stream: RequestStream): HitCeiling {
  const seen = new Set<number>()
  let hitBlocks = 0
  for (const request of stream.requests) {
    hitBlocks += leadingHits(request, stream.blockSize, (key) => seen.has(key))
    for (const key of request.promptBlocks) seen.add(key)
    for (const key of request.answerBlocks) seen.add(key)
  }
  return toHitCeiling(stream, hitBlocks)
}
