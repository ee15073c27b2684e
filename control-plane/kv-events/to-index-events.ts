import type { IndexEvent } from '../../shared/kv-index/kv-index.ts'
import type { TierEvent } from '../../shared/kv-index/tier-holdings.ts'
import type { KvCacheEvent } from './kv-cache-event.ts'

/** A pod's batch split by where it goes: the GPU prefix cache, and the other tiers. */
export interface PodEvents {
  index: IndexEvent[]
  tiers: TierEvent[]
}

/**
 * vLLM's events as the index and the tier holdings take them. The GPU tier (medium "GPU",
 * or null from releases before #19737) is the prefix cache the scheduler hits; blocks a
 * connector holds elsewhere ("CPU", "STORAGE", FS, OBJ, …) are tier holdings, never GPU
 * hits. AllBlocksCleared goes to both. cache_salt is read from the first block's extra
 * keys when vLLM sends them: the string there that is not the LoRA name. Without it a
 * salted request matches nothing, the safe direction.
 */
export function toPodEvents(events: readonly KvCacheEvent[]): PodEvents {
  const out: PodEvents = { index: [], tiers: [] }
  for (const event of events) {
    if (event.type === 'AllBlocksCleared') {
      out.index.push(cleared)
      out.tiers.push(cleared)
    } else if (event.medium !== null && event.medium !== 'GPU') {
      out.tiers.push({
        type: event.type === 'BlockStored' ? 'stored' : 'removed',
        medium: event.medium,
        engineHashes: event.blockHashes,
      })
    } else if (event.type === 'BlockRemoved') {
      out.index.push({ type: 'removed', engineHashes: event.blockHashes })
    } else {
      out.index.push({
        type: 'stored',
        engineHashes: event.blockHashes,
        parentEngineHash: event.parentBlockHash,
        tokenIds: event.tokenIds,
        blockSize: event.blockSize,
        loraName: event.loraName,
        cacheSalt:
          event.parentBlockHash === null ? saltOf(event.extraKeys?.[0], event.loraName) : null,
      })
    }
  }
  return out
}

/** The GPU tier's events alone (see toPodEvents). */
export function toIndexEvents(events: readonly KvCacheEvent[]): IndexEvent[] {
  return toPodEvents(events).index
}

const cleared = { type: 'cleared' } as const

function saltOf(extra: unknown, loraName: string | null): string | null {
  if (!Array.isArray(extra)) return null
  const salt = extra.find((key) => typeof key === 'string' && key !== loraName)
  return typeof salt === 'string' ? salt : null
}
