import type { BlockRemoved, BlockStored } from './kv-cache-event.ts'

/**
 * vLLM's `KVCacheSpecKind` values (`vllm/v1/kv_cache_interface.py`, sent as
 * `kv_cache_spec_kind` since #40984) of the groups that cache the whole prefix: full
 * attention, MLA, and full attention with sink tokens (a FullAttentionSpec).
 */
const fullAttentionKinds: ReadonlySet<string> = new Set([
  'full_attention',
  'mla_attention',
  'sink_full_attention',
])

/** The kinds that do not: windows (MLA or not), chunks, recurrent state, no decoder cache. */
const partialKinds: ReadonlySet<string> = new Set([
  'sliding_window',
  'sliding_window_mla',
  'chunked_local_attention',
  'mamba',
  'encoder_only_attention',
  'cross_attention',
])

/**
 * Which of a pod's KV-cache groups the index keeps (docs/vllm-wire.md §1.8): the
 * full-attention group, named by `kv_cache_spec_kind` on its BlockStored events (the
 * first such group seen, if a model has several), else group 0 (releases before #40984,
 * and kinds such as "unknown" that say neither); an event without `group_idx` (one
 * group, or releases before #37688) is always taken. A
 * BlockRemoved carries no kind: it is taken when it names the group learned from the
 * stores. One per pod, for the life of its feed: a pod's groups follow its model and
 * configuration, not its incarnation.
 */
export class AttentionGroup {
  private group: number | null = null

  /** The group learned from a kind, or null while none was seen. */
  get learned(): number | null {
    return this.group
  }

  /** Whether the event (any medium) belongs to the group the index keeps. */
  takes(event: BlockStored | BlockRemoved): boolean {
    const idx = event.groupIdx
    if (idx === null || idx === undefined) return true
    if (event.type === 'BlockStored') {
      const kind = event.kvCacheSpecKind
      if (kind !== null && kind !== undefined) {
        if (partialKinds.has(kind)) return false
        if (fullAttentionKinds.has(kind)) this.group ??= idx
      }
    }
    return idx === (this.group ?? 0)
  }
}
