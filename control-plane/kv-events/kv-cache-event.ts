import { z } from 'zod'

/**
 * vLLM's KV-cache events (`vllm/distributed/kv_events.py`) as the router and the simulator
 * see them: camelCase, hashes as unsigned 64-bit bigint. Each schema accepts what the wire
 * carries (any msgpack int width, `bin` hashes, ints that arrived as bigint) and yields that
 * domain shape; the decoder maps wire field names and positions onto these keys first.
 */

const uint64Max = (1n << 64n) - 1n

/**
 * vLLM's `ExternalBlockHash = bytes | int`. Ints are the last 8 bytes of the digest read as
 * uint64; a signed encoder writes the upper half as negative int64, so every int is folded
 * modulo 2^64. `bin` (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=0) is folded to its last 8 bytes
 * big-endian, as the llm-d and kthena decoders do.
 */
export function toBlockHash(value: bigint | number | Uint8Array): bigint {
  if (!(value instanceof Uint8Array)) return BigInt.asUintN(64, BigInt(value))
  let hash = 0n
  for (const byte of value.subarray(Math.max(0, value.length - 8))) {
    hash = (hash << 8n) | BigInt(byte)
  }
  return hash
}

export const BlockHash = z
  .union(
    [
      z
        .bigint()
        .min(-(1n << 63n))
        .max(uint64Max),
      z.int(),
      z.instanceof(Uint8Array).refine((bytes) => bytes.length > 0, 'empty bin is not a hash'),
    ],
    { error: 'a block hash is a 64-bit int or a bin' },
  )
  .transform(toBlockHash)
export type BlockHash = z.infer<typeof BlockHash>

/** An integer; some encoders (Go's, without compact ints) send even small ones as int64. */
function wireInt<Out extends z.ZodType<number, number>>(inner: Out) {
  return z.union([z.number(), z.bigint().transform(Number)]).pipe(inner)
}

const Int = wireInt(z.int())
const Count = wireInt(z.int().min(0))

export const BlockStored = z.object({
  type: z.literal('BlockStored'),
  blockHashes: z.array(BlockHash),
  /** null starts a chain. llm-d-inference-sim's legacy format sends 0 instead; kept as is. */
  parentBlockHash: BlockHash.nullable(),
  /** n_blocks × blockSize token ids (not enforced: connectors are free to differ). */
  tokenIds: z.array(Count),
  /**
   * The KV-cache group's block size. 0 in the OffloadingConnector's placeholder events
   * for the CPU and STORAGE tiers (`token_ids` empty too, vLLM
   * `vllm/distributed/kv_transfer/kv_connector/v1/offloading/events.py`): the decoder
   * refuses 0 only on the GPU tier (decode-event-batch.ts).
   */
  blockSize: Count,
  /** Deprecated in vLLM in favour of loraName. */
  loraId: Int.nullable(),
  /** "GPU" from the engine; connectors emit others: "CPU", "STORAGE", and in v0.26 FS, OBJ. */
  medium: z.string().nullable(),
  loraName: z.string().nullable(),
  /** One entry per block: a tuple (array) or null. Opaque to the router, kept as decoded. */
  extraKeys: z.array(z.unknown()).nullable().optional(),
  /** KV cache group of hybrid models. */
  groupIdx: Int.nullable().optional(),
  /** e.g. "full_attention". */
  kvCacheSpecKind: z.string().nullable().optional(),
  kvCacheSpecSlidingWindow: Int.nullable().optional(),
})
export type BlockStored = z.infer<typeof BlockStored>

/** A cached block was evicted (sent lazily, when the block is re-allocated). */
export const BlockRemoved = z.object({
  type: z.literal('BlockRemoved'),
  blockHashes: z.array(BlockHash),
  medium: z.string().nullable(),
  groupIdx: Int.nullable().optional(),
})
export type BlockRemoved = z.infer<typeof BlockRemoved>

/** reset_prefix_cache(); NOT sent on restart (a restart shows as seq going back to 0). */
export const AllBlocksCleared = z.object({ type: z.literal('AllBlocksCleared') })
export type AllBlocksCleared = z.infer<typeof AllBlocksCleared>

export const KvCacheEvent = z.discriminatedUnion('type', [
  BlockStored,
  BlockRemoved,
  AllBlocksCleared,
])
export type KvCacheEvent = z.infer<typeof KvCacheEvent>

/**
 * Why one event of a batch was left out: it is not an event at all, it has no type tag, a
 * type this version does not know (newer vLLM adds them), or the named wire field is
 * wrong. Bounded by the wire fields, so it can be a metric label.
 */
export type SkipReason = 'not_an_event' | 'no_type' | 'unknown_type' | `invalid_${string}`

export interface SkippedEvent {
  /** The event's position in the batch as sent. */
  index: number
  reason: SkipReason
  message: string
}

/** One engine step's events (`KVEventBatch`). */
export const EventBatch = z.object({
  /** Wall-clock seconds (Python `time.time()`), written as float64. */
  ts: z.union([z.number(), z.bigint().transform(Number)]).pipe(z.number()),
  events: z.array(KvCacheEvent),
  dataParallelRank: Int.nullable(),
})
export type EventBatch = z.infer<typeof EventBatch>

/**
 * A batch as the decoder reads it: the events it could read, and those it left out (the
 * key is absent when it left out none, the common case).
 */
export interface DecodedEventBatch extends EventBatch {
  skipped?: readonly SkippedEvent[]
}
