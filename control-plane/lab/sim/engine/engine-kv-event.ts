/**
 * One element of a block's extra keys, as vLLM's `generate_block_hash_extra_keys`
 * (`vllm/v1/core/kv_cache_utils.py`) puts it in the block hash: the LoRA name, a
 * multimodal input `(identifier, offset of its first token relative to the block start)`
 * and, in the first block only, `cache_salt`. Tagged here so the wire can also write the
 * typed form of PR #55488; the plain form and the hash only see strings and pairs.
 */
export type EngineExtraKey =
  | { kind: 'lora'; name: string }
  | { kind: 'mm'; identifier: string; offset: number; modality: string }
  | { kind: 'cache_salt'; salt: string }

export type KvCacheSpecKind = 'full_attention' | 'sliding_window'

/** What `KVCacheManager.take_events` annotates a group's BlockStored with. */
export interface KvCacheSpecInfo {
  kind: KvCacheSpecKind
  slidingWindow: number | null
}

export type KvMedium = 'GPU' | 'CPU'

/** KV-cache events as the engine produces them, in vLLM's terms (docs/vllm-wire.md §1.5). */
export type EngineKvEvent =
  | {
      type: 'BlockStored'
      medium: KvMedium
      blockHashes: bigint[]
      parentBlockHash: bigint | null
      tokenIds: number[]
      blockSize: number
      loraName: string | null
      /** vLLM's LoRA int id (`lora_request.adapter_id`), deprecated on the wire. */
      loraId: number | null
      /** One entry per hash: the block's extra keys or null; null for connector events. */
      extraKeys: (EngineExtraKey[] | null)[] | null
      groupIdx: number
      /** null: a connector placeholder, which carries no spec. */
      kvCacheSpec: KvCacheSpecInfo | null
    }
  | { type: 'BlockRemoved'; medium: KvMedium; blockHashes: bigint[]; groupIdx: number }
  | { type: 'AllBlocksCleared' }

/** A multimodal input's placeholder tokens in the prompt (vLLM's `mm_features`). */
export interface MultimodalFeature {
  /** vLLM's `MultiModalFeatureSpec.identifier`: the item's content hash. */
  identifier: string
  /** First placeholder token, an index into the prompt. */
  offset: number
  length: number
  /** Only the typed extra keys (PR #55488) show it; "image" when not given. */
  modality?: string
}
