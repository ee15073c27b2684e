import { type BlockKeyChain, extendBlockKeys, type KeyPair } from './block-keys.ts'
import type { IndexEvent } from './kv-index.ts'

export type StoredEvent = Extract<IndexEvent, { type: 'stored' }>

/**
 * How many blocks of a BlockStored event the index takes: one per engine hash that has a
 * full block of tokens behind it. Garbage (a non-integer or non-positive block size, a hash
 * that is not a bigint) yields 0, so hostile input indexes nothing rather than a guess.
 * Both index implementations use this, so they agree on every malformed event.
 */
export function storedBlockCount(event: StoredEvent): number {
  const { blockSize, engineHashes, tokenIds } = event
  if (!Number.isSafeInteger(blockSize) || blockSize < 1) return 0
  if (!Array.isArray(engineHashes) || typeof tokenIds?.length !== 'number') return 0
  for (const hash of engineHashes) if (typeof hash !== 'bigint') return 0
  return Math.min(engineHashes.length, Math.floor(tokenIds.length / blockSize))
}

/**
 * Our keys for the event's blocks: chained on the parent's key, or on the (model, LoRA)
 * root salted with cache_salt when the event starts a sequence, each block with its own
 * extra keys. At least `storedBlockCount(event)` keys; the caller uses that many.
 */
export function storedBlockKeys(
  event: StoredEvent,
  parent: KeyPair | null,
  model: string,
): BlockKeyChain {
  return extendBlockKeys(
    parent,
    event.tokenIds,
    event.blockSize,
    {
      model,
      loraName: event.loraName,
      cacheSalt: event.cacheSalt,
    },
    event.blockExtras ?? null,
  )
}
