import { type HitCeiling, leadingHits, toHitCeiling } from './hit-ceiling.ts'
import type { RequestStream } from './request-stream.ts'

/**
 * What the pool's KV cache serves under vLLM's own eviction (least recently used) if it
 * were one cache of all its blocks, each block on one pod: routing that always finds the
 * pod holding a prefix and never copies one, with the eviction the pods really run. Not a
 * bound (pods that partition the prefixes can beat one shared LRU), but the reference a
 * router can be asked to approach where offline eviction (Belady, capacity-hit-ceiling.ts)
 * is out of any router's reach: it knows the future.
 */
export function lruHitReference(stream: RequestStream, capacityBlocks: number): HitCeiling {
  // A Map keeps insertion order: deleting and re-inserting a key moves it to the end.
  const resident = new Map<number, true>()
  let hitBlocks = 0
  for (const request of stream.requests) {
    hitBlocks += leadingHits(request, stream.blockSize, (key) => resident.has(key))
    for (const key of [...request.promptBlocks, ...request.answerBlocks]) {
      resident.delete(key)
      resident.set(key, true)
      if (resident.size > capacityBlocks) {
        const oldest = resident.keys().next().value as number
        resident.delete(oldest)
      }
    }
  }
  return toHitCeiling(stream, hitBlocks)
}
