import { EventQueue } from '../des/event-queue.ts'
import { type HitCeiling, leadingHits, lookupBlocks, toHitCeiling } from './hit-ceiling.ts'
import type { RequestStream } from './request-stream.ts'

export interface CapacityHitCeiling extends HitCeiling {
  capacityBlocks: number
  /** Blocks of requests larger than the whole cache, which could not be held at all. */
  unheldBlocks: number
  /** Each request's hit blocks, in stream order (what the fluid bound's prefill term reads). */
  hitBlocksByRequest: number[]
}

/** Priority order: the farthest next use first, then the deepest block of a chain. */
const depthSpan = 2 ** 20

/**
 * The capacity-constrained hit ceiling: the share of prompt tokens the pool's KV cache
 * (`capacityBlocks`, e.g. pods × num_gpu_blocks) could serve with perfect foresight.
 * Simplifications, each in the ceiling's favour:
 * - No replication: each block lives on at most one pod, so the pool is one cache of all
 *   its blocks, and a request is served by whichever pod holds its prefix.
 * - Requests are served one at a time in stream order: only the blocks of the request
 *   being served are pinned (vLLM pins every running request's).
 * - Offline Belady: when a block must come in, the unpinned block whose next lookup is
 *   farthest in the future goes (never-again first), the deeper block of a chain on ties,
 *   so what is cached stays a set of prefixes and every block hit is a prefix hit.
 * A request with more blocks than the cache holds keeps the first `capacityBlocks` and
 * computes the rest without keeping them (vLLM would refuse it).
 */
export function capacityHitCeiling(
  stream: RequestStream,
  capacityBlocks: number,
): CapacityHitCeiling {
  const { requests, blockSize } = stream
  const nextUse = nextUseAfter(stream)
  // Key → version of its live entry in the queue (older entries are stale).
  const resident = new Map<number, number>()
  const queue = new EventQueue<{ key: number; version: number }>()
  let version = 0
  let hitBlocks = 0
  let unheldBlocks = 0
  // Pinned blocks are out of the queue while their request is served (their entries
  // are stale), so an eviction never has to step over them.
  const evict = (): boolean => {
    for (let item = queue.pop(); item; item = queue.pop()) {
      const { key, version: v } = item.event
      if (resident.get(key) !== v) continue
      resident.delete(key)
      return true
    }
    return false
  }
  const hitBlocksByRequest: number[] = []
  for (const [r, request] of requests.entries()) {
    const hits = leadingHits(request, blockSize, (key) => resident.has(key))
    hitBlocksByRequest.push(hits)
    hitBlocks += hits
    const blocks = [...request.promptBlocks, ...request.answerBlocks]
    const pinned: [depth: number, key: number][] = []
    for (const [depth, key] of blocks.entries()) {
      if (!resident.has(key) && resident.size >= capacityBlocks && !evict()) {
        unheldBlocks++
        continue
      }
      resident.set(key, ++version)
      pinned.push([depth, key])
    }
    for (const [depth, key] of pinned) {
      queue.push(-(nextUse(key, r) * depthSpan + depth), {
        key,
        version: resident.get(key) as number,
      })
    }
  }
  return { ...toHitCeiling(stream, hitBlocks), capacityBlocks, unheldBlocks, hitBlocksByRequest }
}

/** For each block, the index of the next request after `r` that can hit it (or the end). */
function nextUseAfter(stream: RequestStream): (key: number, r: number) => number {
  const never = stream.requests.length
  const uses = new Map<number, number[]>()
  for (const [r, request] of stream.requests.entries()) {
    const limit = lookupBlocks(request, stream.blockSize)
    for (let i = 0; i < limit; i++) {
      const key = request.promptBlocks[i] as number
      const list = uses.get(key)
      if (list === undefined) uses.set(key, [r])
      else list.push(r)
    }
  }
  const cursors = new Map<number, number>()
  return (key, r) => {
    const list = uses.get(key)
    if (list === undefined) return never
    let i = cursors.get(key) ?? 0
    while (i < list.length && (list[i] as number) <= r) i++
    cursors.set(key, i)
    return list[i] ?? never
  }
}
