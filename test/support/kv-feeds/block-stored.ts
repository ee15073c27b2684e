import type { BlockStored, EventBatch } from '../../../control-plane/kv-events/kv-cache-event.ts'

/**
 * A BlockStored event as the subscriber decodes it: a GPU block of 16 tokens with no
 * parent and no LoRA adapter unless `fields` says otherwise.
 */
export function blockStored(
  blockHashes: bigint[],
  tokenIds: number[],
  fields: Partial<BlockStored> = {},
): BlockStored {
  return {
    type: 'BlockStored',
    blockHashes,
    parentBlockHash: null,
    tokenIds,
    blockSize: 16,
    loraId: null,
    medium: 'GPU',
    loraName: null,
    ...fields,
  }
}

/** A batch of `events` at time 0 without a data-parallel rank. */
export const eventBatch = (...events: EventBatch['events']): EventBatch => ({
  ts: 0,
  dataParallelRank: null,
  events,
})
