/**
 * Chained 64-bit hashes of full KV-cache blocks, the simulator's stand-in for vLLM's
 * sha256 chain: h_i = H(h_{i-1}, tokens of block i, extra keys), where the root is a
 * per-incarnation random NONE_HASH (as vLLM without PYTHONHASHSEED) so a restarted pod
 * publishes different hashes for the same prefix. Routers must not depend on these
 * values (they key blocks by token ids), exactly as with real vLLM.
 */
export interface BlockHasher {
  /** Hash of the block `tokens[start, start+blockSize)` chained on `parent` (null = first block). */
  hash(
    parent: bigint | null,
    tokens: readonly number[],
    start: number,
    extra: string | null,
  ): bigint
}

const mask32 = 0xffffffff

function mix(h: number, value: number): number {
  // murmur3's 32-bit round: enough avalanche for cache keys, cheap in JS.
  let k = Math.imul(value, 0xcc9e2d51)
  k = (k << 15) | (k >>> 17)
  k = Math.imul(k, 0x1b873593)
  let x = h ^ k
  x = (x << 13) | (x >>> 19)
  return (Math.imul(x, 5) + 0xe6546b64) | 0
}

function finish(h: number, length: number): number {
  let x = h ^ length
  x ^= x >>> 16
  x = Math.imul(x, 0x85ebca6b)
  x ^= x >>> 13
  x = Math.imul(x, 0xc2b2ae35)
  x ^= x >>> 16
  return x >>> 0
}

function mixString(h: number, text: string): number {
  let x = h
  for (let i = 0; i < text.length; i++) x = mix(x, text.charCodeAt(i))
  return mix(x, text.length)
}

/** `rootSeed` plays NONE_HASH: two random 32-bit words per engine incarnation. */
export function createBlockHasher(
  blockSize: number,
  rootSeed: readonly [number, number],
): BlockHasher {
  const [rootHigh, rootLow] = rootSeed
  return {
    hash(parent, tokens, start, extra) {
      let high = parent === null ? rootHigh : Number((parent >> 32n) & 0xffffffffn)
      let low = parent === null ? rootLow : Number(parent & 0xffffffffn)
      // Two lanes seeded differently give 64 bits of key from 32-bit arithmetic.
      high = mix(high, 0x9e3779b9)
      low = mix(low ^ 0x7f4a7c15, high)
      for (let i = start; i < start + blockSize; i++) {
        const token = tokens[i] ?? 0
        high = mix(high, token)
        low = mix(low, token ^ 0x5bd1e995)
      }
      if (extra !== null) {
        high = mixString(high, extra)
        low = mixString(low, extra)
      }
      const h = finish(high, blockSize) & mask32
      const l = finish(low ^ h, blockSize) & mask32
      return (BigInt(h >>> 0) << 32n) | BigInt(l >>> 0)
    },
  }
}
