import type { PublishedEvent } from '../../kv-events/vllm-event-structs.ts'
import type { EngineExtraKey, EngineKvEvent } from './engine/engine-kv-event.ts'
import { defaultKvEventsOptions, type SimKvEventsOptions } from './engine/kv-events-options.ts'

type WireOptions = Pick<SimKvEventsOptions, 'extraKeys' | 'groupFields' | 'hybrid'>

/** An engine event as vLLM publishes it in its default configuration. */
export function toWireEvent(event: EngineKvEvent): PublishedEvent {
  return wireEvent(event, defaultKvEventsOptions)
}

/** The conversion of a pod configured with `options` (its `kvEvents`). */
export function wireEventMapper(options: WireOptions): (event: EngineKvEvent) => PublishedEvent {
  return (event) => wireEvent(event, options)
}

/**
 * GPU events carry the group and its spec when the model has several groups or the pod
 * writes them for one (`KVCacheManager.take_events` annotates BlockStored with
 * kv_cache_spec_kind and the window; BlockRemoved only needs group_idx). Connector (CPU)
 * events always name their group, as `OffloadingEventsTracker` writes them, and a spec
 * only when self-describing.
 */
function wireEvent(event: EngineKvEvent, options: WireOptions): PublishedEvent {
  if (event.type === 'AllBlocksCleared') return event
  const announce = event.medium !== 'GPU' || options.groupFields || options.hybrid !== null
  if (event.type === 'BlockRemoved') {
    const { blockHashes, medium, groupIdx } = event
    return announce
      ? { type: 'BlockRemoved', blockHashes, medium, groupIdx }
      : { type: 'BlockRemoved', blockHashes, medium }
  }
  const stored: PublishedEvent = {
    type: 'BlockStored',
    blockHashes: event.blockHashes,
    parentBlockHash: event.parentBlockHash,
    tokenIds: event.tokenIds,
    blockSize: event.blockSize,
    loraId: event.loraId,
    medium: event.medium,
    loraName: event.loraName,
  }
  if (options.extraKeys === 'typed') stored.eventVersion = 1
  if (event.extraKeys !== null && options.extraKeys !== 'omitted') {
    stored.extraKeys = event.extraKeys.map((keys) =>
      keys === null ? null : keys.map(options.extraKeys === 'typed' ? typedKey : plainKey),
    )
  }
  if (announce) {
    stored.groupIdx = event.groupIdx
    if (event.kvCacheSpec !== null) {
      stored.kvCacheSpecKind = event.kvCacheSpec.kind
      stored.kvCacheSpecSlidingWindow = event.kvCacheSpec.slidingWindow
    }
  }
  return stored
}

/** The bare values vLLM hashes: a string, or an (identifier, offset) pair. */
function plainKey(key: EngineExtraKey): unknown {
  switch (key.kind) {
    case 'lora':
      return key.name
    case 'cache_salt':
      return key.salt
    case 'mm':
      return [key.identifier, key.offset]
  }
}

/**
 * PR #55488's tagged structs (`LoRAKey`, `CacheSaltKey`, `MultiModalKey`): msgspec writes
 * a struct with tag=True as a map, the tag under "type" first, then its fields in order.
 */
function typedKey(key: EngineExtraKey): unknown {
  switch (key.kind) {
    case 'lora':
      return { type: 'lora', name: key.name }
    case 'cache_salt':
      return { type: 'cache_salt', salt: key.salt }
    case 'mm':
      return { type: 'mm', modality: key.modality, hash: key.identifier, block_offset: key.offset }
  }
}
