import type { AllBlocksCleared, BlockRemoved, BlockStored, KvCacheEvent } from './kv-cache-event.ts'

/**
 * How a field behaves on the wire:
 * - `required`: always written; a decoder rejects the event without it.
 * - `nullable`: always written (no default in vLLM), but added by a later vLLM PR, so an
 *   event from an older release may lack it; the decoder then reads null.
 * - `default`: defaults to None, so msgspec's omit_defaults drops it when null.
 */
export type FieldPresence = 'required' | 'nullable' | 'default'

export interface WireField {
  /** msgspec's field name: the map key, and by its position the legacy array index. */
  readonly wire: string
  /** The property of the event type. */
  readonly key: string
  readonly presence: FieldPresence
}

type FieldsOf<Event> = readonly (WireField & { readonly key: Exclude<keyof Event, 'type'> })[]

/** Field order of each msgspec struct (docs/vllm-wire.md §1.4); the tag comes first. */
export const eventFields: {
  readonly BlockStored: FieldsOf<BlockStored>
  readonly BlockRemoved: FieldsOf<BlockRemoved>
  readonly AllBlocksCleared: FieldsOf<AllBlocksCleared>
} = {
  BlockStored: [
    { wire: 'block_hashes', key: 'blockHashes', presence: 'required' },
    { wire: 'parent_block_hash', key: 'parentBlockHash', presence: 'required' },
    { wire: 'token_ids', key: 'tokenIds', presence: 'required' },
    { wire: 'block_size', key: 'blockSize', presence: 'required' },
    { wire: 'lora_id', key: 'loraId', presence: 'nullable' },
    { wire: 'medium', key: 'medium', presence: 'nullable' },
    { wire: 'lora_name', key: 'loraName', presence: 'nullable' },
    { wire: 'extra_keys', key: 'extraKeys', presence: 'default' },
    { wire: 'group_idx', key: 'groupIdx', presence: 'default' },
    { wire: 'kv_cache_spec_kind', key: 'kvCacheSpecKind', presence: 'default' },
    { wire: 'kv_cache_spec_sliding_window', key: 'kvCacheSpecSlidingWindow', presence: 'default' },
  ],
  BlockRemoved: [
    { wire: 'block_hashes', key: 'blockHashes', presence: 'required' },
    { wire: 'medium', key: 'medium', presence: 'nullable' },
    { wire: 'group_idx', key: 'groupIdx', presence: 'default' },
  ],
  AllBlocksCleared: [],
}

/** The fields of a known tag; undefined for tags this version does not know (or "__proto__"). */
export function fieldsOf(tag: string): readonly WireField[] | undefined {
  return Object.hasOwn(eventFields, tag) ? eventFields[tag as KvCacheEvent['type']] : undefined
}
