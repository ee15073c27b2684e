import type { IndexEvent } from '../../shared/kv-index/kv-index.ts'
import type { KvCacheEvent } from './kv-cache-event.ts'

/**
 * vLLM's events as the index takes them. Only the GPU tier counts (blocks offloaded by a
 * connector to CPU or disk are not a prefix-cache hit for the scheduler). cache_salt is
 * read from the first block's extra keys when vLLM sends them: the string there that is
 * not the LoRA name. Without it a salted request matches nothing, the safe direction.
 */
export function toIndexEvents(events: readonly KvCacheEvent[]): IndexEvent[] {
  const out: IndexEvent[] = []
  for (const event of events) {
    if (event.type === 'AllBlocksCleared') out.push({ type: 'cleared' })
    else if (event.medium !== null && event.medium !== 'GPU') continue
    else if (event.type === 'BlockRemoved')
      out.push({ type: 'removed', engineHashes: event.blockHashes })
    else {
      out.push({
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

function saltOf(extra: unknown, loraName: string | null): string | null {
  if (!Array.isArray(extra)) return null
  const salt = extra.find((key) => typeof key === 'string' && key !== loraName)
  return typeof salt === 'string' ? salt : null
}
