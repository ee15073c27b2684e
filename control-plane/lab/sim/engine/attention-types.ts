import type { AttentionType } from './find-longest-cache-hit.ts'
import type { KvCacheLayout } from './kv-cache-layout.ts'

/**
 * A layout's KV-cache groups gathered by attention type (kind, window, block size), as
 * vLLM's hybrid coordinator looks them up (`vllm/v1/core/kv_cache_coordinator.py`): a
 * type's block at an index is found when every group of the type has it cached.
 */
export function attentionTypes(
  layout: KvCacheLayout,
  blockOf: (group: number, index: number) => number | undefined,
): AttentionType[] {
  const types: AttentionType[] = []
  for (const group of layout.groups) {
    const same = types.find(
      (t) =>
        t.kind === group.spec.kind &&
        t.slidingWindow === group.spec.slidingWindow &&
        t.blockSize === group.blockSize,
    )
    if (same) {
      ;(same.groups as number[]).push(group.index)
      continue
    }
    const groups: number[] = [group.index]
    types.push({
      kind: group.spec.kind,
      blockSize: group.blockSize,
      slidingWindow: group.spec.slidingWindow,
      groups,
      lookup: (index) => {
        const found: number[] = []
        for (const g of groups) {
          const block = blockOf(g, index)
          if (block === undefined) return undefined
          found.push(block)
        }
        return found
      },
    })
  }
  return types
}
