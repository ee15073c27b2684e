import type { IndexEvent } from '../../shared/kv-index/kv-index.ts'
import type { TierEvent } from '../../shared/kv-index/tier-holdings.ts'
import { AttentionGroup } from './attention-group.ts'
import type { BlockStored, KvCacheEvent } from './kv-cache-event.ts'
import { readExtraKeys } from './read-extra-keys.ts'

/** A pod's batch split by where it goes: the GPU prefix cache, and the other tiers. */
export interface PodEvents {
  index: IndexEvent[]
  tiers: TierEvent[]
  /**
   * The block size of the GPU blocks the batch indexes (the last such event's): what the
   * router must key requests with for this pod (docs/vllm-wire.md §1.8); null when the
   * batch stores none.
   */
  blockSize: number | null
}

/**
 * vLLM's events as the index and the tier holdings take them. The GPU tier (medium "GPU",
 * or null from releases before #19737) is the prefix cache the scheduler hits; blocks a
 * connector holds elsewhere ("CPU", "STORAGE", FS, OBJ, …) are tier holdings, never GPU
 * hits. AllBlocksCleared goes to both. Of a hybrid model's KV-cache groups only the
 * full-attention one is kept, in both (`groups`, the pod's own: it learns which group that
 * is). The LoRA name, cache_salt and each block's multimodal inputs come from
 * `lora_name` and `extra_keys` (read-extra-keys.ts); without them a salted request matches
 * nothing, the safe direction.
 */
export function toPodEvents(
  events: readonly KvCacheEvent[],
  groups: AttentionGroup = new AttentionGroup(),
): PodEvents {
  const out: PodEvents = { index: [], tiers: [], blockSize: null }
  for (const event of events) {
    if (event.type === 'AllBlocksCleared') {
      out.index.push(cleared)
      out.tiers.push(cleared)
    } else if (!groups.takes(event)) {
      // Another group's blocks and removals say nothing of the full-attention prefix.
    } else if (event.medium !== null && event.medium !== 'GPU') {
      out.tiers.push({
        type: event.type === 'BlockStored' ? 'stored' : 'removed',
        medium: event.medium,
        engineHashes: event.blockHashes,
      })
    } else if (event.type === 'BlockRemoved') {
      out.index.push({ type: 'removed', engineHashes: event.blockHashes })
    } else {
      out.index.push(storedOf(event))
      if (event.blockSize > 0 && event.tokenIds.length >= event.blockSize) {
        out.blockSize = event.blockSize
      }
    }
  }
  return out
}

const cleared = { type: 'cleared' } as const

function storedOf(event: BlockStored): IndexEvent {
  const { loraName, cacheSalt, blockExtras } = readExtraKeys(event)
  const stored: IndexEvent = {
    type: 'stored',
    engineHashes: event.blockHashes,
    parentEngineHash: event.parentBlockHash,
    tokenIds: event.tokenIds,
    blockSize: event.blockSize,
    loraName,
    cacheSalt,
  }
  if (blockExtras !== null) stored.blockExtras = blockExtras
  return stored
}
