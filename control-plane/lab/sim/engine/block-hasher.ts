import { avalanche32, mix32, mixText32 } from '../../../../shared/hashing/murmur-mix.ts'
import type { EngineExtraKey } from './engine-kv-event.ts'

/**
 * Chained 64-bit hashes of full KV-cache blocks, the simulator's stand-in for vLLM's
 * `hash_block_tokens` (`vllm/v1/core/kv_cache_utils.py`): h_i = H(h_{i-1}, tokens of block
 * i, extra keys), where the root is a per-incarnation random NONE_HASH (as vLLM without
 * PYTHONHASHSEED) so a restarted pod publishes different hashes for the same prefix.
 * Routers must not depend on these values (they key blocks by token ids), exactly as with
 * real vLLM.
 */
export interface BlockHasher {
  /** Hash of the block `tokens[start, start+blockSize)` chained on `parent` (null = first block). */
  hash(
    parent: bigint | null,
    tokens: readonly number[],
    start: number,
    blockSize: number,
    extraKeys: readonly EngineExtraKey[] | null,
  ): bigint
}

/** `rootSeed` plays NONE_HASH: two random 32-bit words per engine incarnation. */
export function createBlockHasher(rootSeed: readonly [number, number]): BlockHasher {
  const [rootHigh, rootLow] = rootSeed
  return {
    hash(parent, tokens, start, blockSize, extraKeys) {
      let high = parent === null ? rootHigh : Number((parent >> 32n) & 0xffffffffn)
      let low = parent === null ? rootLow : Number(parent & 0xffffffffn)
      // Two lanes seeded differently give 64 bits of key from 32-bit arithmetic.
      high = mix32(high, 0x9e3779b9)
      low = mix32(low ^ 0x7f4a7c15, high)
      for (let i = start; i < start + blockSize; i++) {
        const token = tokens[i] ?? 0
        high = mix32(high, token)
        low = mix32(low, token ^ 0x5bd1e995)
      }
      if (extraKeys !== null) {
        for (const key of extraKeys) {
          high = mixKey(high, key)
          low = mixKey(low ^ 0x2545f491, key)
        }
        high = mix32(high, extraKeys.length)
      }
      const h = avalanche32(high ^ blockSize)
      const l = avalanche32(low ^ h ^ blockSize)
      return (BigInt(h >>> 0) << 32n) | BigInt(l >>> 0)
    },
  }
}

/**
 * vLLM hashes the tuple of bare values, so a LoRA name and a salt of the same text are the
 * same key (as in vLLM); a multimodal pair is a different kind of value.
 */
function mixKey(h: number, key: EngineExtraKey): number {
  switch (key.kind) {
    case 'lora':
      return mixText32(mix32(h, 1), key.name)
    case 'cache_salt':
      return mixText32(mix32(h, 1), key.salt)
    case 'mm':
      return mix32(mixText32(mix32(h, 2), key.identifier), key.offset)
  }
}
