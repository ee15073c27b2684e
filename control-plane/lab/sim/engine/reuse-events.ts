import { blockExtraKeys } from './block-extra-keys.ts'
import type { EngineKvEvent } from './engine-kv-event.ts'
import type { KvCacheLayout } from './kv-cache-layout.ts'
import type { RequestBlocks } from './request-blocks.ts'

/**
 * `emit_cached_block_events` (kv_cache_report_mode "full", vLLM PR #45261): one
 * BlockStored per group for the blocks a lookup reused, from the first block on.
 */
export function reuseEvents(
  layout: KvCacheLayout,
  request: RequestBlocks,
  hits: readonly number[][],
  hashOf: (group: number, index: number) => bigint,
): EngineKvEvent[] {
  const events: EngineKvEvent[] = []
  for (const group of layout.groups) {
    const count = hits[group.index]?.length ?? 0
    if (count === 0) continue
    const { index, blockSize } = group
    events.push({
      type: 'BlockStored',
      medium: 'GPU',
      blockHashes: Array.from({ length: count }, (_, k) => hashOf(index, k)),
      parentBlockHash: null,
      tokenIds: request.tokens.slice(0, count * blockSize),
      blockSize,
      loraName: request.source.loraName,
      loraId: request.loraId,
      extraKeys: Array.from({ length: count }, (_, k) =>
        blockExtraKeys(request.source, k * blockSize, (k + 1) * blockSize),
      ),
      groupIdx: index,
      kvCacheSpec: group.spec,
    })
  }
  return events
}
