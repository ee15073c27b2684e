/*
 * The publishing side's own copy of vLLM's msgspec structs (`vllm/distributed/kv_events.py`,
 * checked at 0181ea31 and later revisions): what the simulator writes, kept apart from the
 * router's `kv-event-fields.ts` so that a mistake in either shows in the tests.
 */

/** An event as the publisher writes it; camelCase, hashes as unsigned 64-bit bigints. */
export type PublishedEvent =
  | PublishedBlockStored
  | PublishedBlockRemoved
  | { type: 'AllBlocksCleared' }

export interface PublishedBlockStored {
  type: 'BlockStored'
  blockHashes: bigint[]
  parentBlockHash: bigint | null
  tokenIds: number[]
  blockSize: number
  /** Deprecated in vLLM (lora_name keys blocks), still written. */
  loraId: number | null
  medium: string | null
  loraName: string | null
  /** Only in the layout of vLLM PR #55488 (typed extra keys); its default is 1. */
  eventVersion?: number
  /** One entry per block: a tuple (array), typed keys (#55488), or null. */
  extraKeys?: unknown[] | null
  groupIdx?: number | null
  kvCacheSpecKind?: string | null
  kvCacheSpecSlidingWindow?: number | null
}

export interface PublishedBlockRemoved {
  type: 'BlockRemoved'
  blockHashes: bigint[]
  medium: string | null
  groupIdx?: number | null
}

/** One engine step's events (`KVEventBatch`). */
export interface PublishedBatch {
  /** Wall-clock seconds (Python `time.time()`), written as float64. */
  ts: number
  events: readonly PublishedEvent[]
  /** Filled in by the publisher when the engine left it None; omitted when null. */
  dataParallelRank?: number | null
}

/**
 * A struct field. Fields without a default are always written (null when unset); fields
 * with one are dropped by msgspec's omit_defaults when they hold it: every such field of a
 * map, only the trailing ones of a legacy array.
 */
export interface StructField {
  readonly wire: string
  readonly key: string
  readonly hasDefault: boolean
  readonly defaultValue: unknown
}

const required = (wire: string, key: string): StructField => ({
  wire,
  key,
  hasDefault: false,
  defaultValue: null,
})
const optional = (wire: string, key: string, defaultValue: unknown = null): StructField => ({
  wire,
  key,
  hasDefault: true,
  defaultValue,
})

const storedHead = [
  required('block_hashes', 'blockHashes'),
  required('parent_block_hash', 'parentBlockHash'),
  required('token_ids', 'tokenIds'),
  required('block_size', 'blockSize'),
  required('lora_id', 'loraId'),
  required('medium', 'medium'),
  required('lora_name', 'loraName'),
]
const storedTail = [
  optional('extra_keys', 'extraKeys'),
  optional('group_idx', 'groupIdx'),
  optional('kv_cache_spec_kind', 'kvCacheSpecKind'),
  optional('kv_cache_spec_sliding_window', 'kvCacheSpecSlidingWindow'),
]

/** BlockStored as merged upstream (#33304 extra_keys, #37688 group_idx, #40984 spec). */
const blockStored: readonly StructField[] = [...storedHead, ...storedTail]

/** BlockStored of PR #55488 (typed extra keys): `event_version: int = 1` after lora_name. */
const blockStoredTyped: readonly StructField[] = [
  ...storedHead,
  optional('event_version', 'eventVersion', 1),
  ...storedTail,
]

const blockRemoved: readonly StructField[] = [
  required('block_hashes', 'blockHashes'),
  required('medium', 'medium'),
  optional('group_idx', 'groupIdx'),
]

/** The fields of an event's struct, in vLLM's order; the tag comes before them. */
export function structFieldsOf(event: PublishedEvent): readonly StructField[] {
  switch (event.type) {
    case 'BlockStored':
      return event.eventVersion === undefined ? blockStored : blockStoredTyped
    case 'BlockRemoved':
      return blockRemoved
    case 'AllBlocksCleared':
      return []
  }
}
