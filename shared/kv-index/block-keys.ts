import { avalanche32, mix32, mixText32 } from '../hashing/murmur-mix.ts'

/**
 * The router's own block keys: a chain of 64-bit keys over full blocks of token ids,
 * seeded with the model and LoRA adapter, the first block salted with cache_salt, as
 * vLLM salts its hashes, and a block's other extra keys (the multimodal inputs it
 * overlaps, docs/vllm-wire.md §1.9) mixed into that block, so two images behind the
 * same placeholder tokens key apart. They never depend on vLLM's hashes (which change with every
 * pod incarnation and hash algorithm): a BlockStored event is mapped to these keys by
 * its token ids, so router and pod agree exactly when they tokenize alike.
 *
 * A chain is a Uint32Array of (high, low) word pairs: no allocation per block, and the
 * in-memory index compares keys as two integers.
 */
export type BlockKeyChain = Uint32Array

export interface BlockKeySeed {
  model: string
  loraName?: string | null
  cacheSalt?: string | null
}

/**
 * Per block (aligned with the blocks keyed), the block's extra keys other than LoRA and
 * salt as one canonical string, or null for a block without any (read-extra-keys.ts).
 */
export type BlockExtras = ArrayLike<string | null>

/** The two 32-bit words a key starts from: the chain's root for (model, LoRA). */
export interface KeyRoot {
  high: number
  low: number
}

/** The root of a chain: model and LoRA adapter, so different models never share keys. */
export function keyRoot(seed: Pick<BlockKeySeed, 'model' | 'loraName'>): KeyRoot {
  const text = `${seed.model}\u0000${seed.loraName ?? ''}`
  return {
    high: avalanche32(mixText32(0x4b494e46, text)),
    low: avalanche32(mixText32(0x2f6b6579, text)),
  }
}

/** One key as its two 32-bit words. */
export interface KeyPair {
  high: number
  low: number
}

/**
 * Writes `count` keys into `out` from word 0: block i covers tokens[i·bs, (i+1)·bs) and
 * chains on block i − 1, block 0 on `previous`. cache_salt enters only the first block of
 * a sequence, which is the block chained on the root; `extras[i]` enters block i.
 */
function chainKeys(
  out: BlockKeyChain,
  tokens: ArrayLike<number>,
  blockSize: number,
  previous: KeyPair,
  salt: string | null,
  count: number,
  extras: BlockExtras | null,
): BlockKeyChain {
  let high = previous.high
  let low = previous.low
  for (let block = 0; block < count; block++) {
    high = mix32(high, 0x9e3779b9)
    low = mix32(low ^ 0x7f4a7c15, high)
    const start = block * blockSize
    for (let i = start; i < start + blockSize; i++) {
      const token = tokens[i] as number
      high = mix32(high, token)
      low = mix32(low, token ^ 0x5bd1e995)
    }
    const extra = extras === null ? null : (extras[block] ?? null)
    if (typeof extra === 'string') {
      high = mixText32(high ^ 0x6d6d6b79, extra)
      low = mixText32(low ^ 0x78747261, extra)
    }
    if (block === 0 && salt !== null) {
      high = mixText32(high, salt)
      low = mixText32(low, salt)
    }
    high = avalanche32(high ^ blockSize)
    low = avalanche32(low ^ high)
    out[2 * block] = high
    out[2 * block + 1] = low
  }
  return out
}

/** Keys of every full block of a prompt; `extras` as BlockExtras, none when absent. */
export function computeBlockKeys(
  tokens: ArrayLike<number>,
  blockSize: number,
  seed: BlockKeySeed,
  extras: BlockExtras | null = null,
): BlockKeyChain {
  const count = Math.floor(tokens.length / blockSize)
  return chainKeys(
    new Uint32Array(2 * count),
    tokens,
    blockSize,
    keyRoot(seed),
    seed.cacheSalt ?? null,
    count,
    extras,
  )
}

/**
 * Keys of the blocks a BlockStored event announces: chained on the key of its parent
 * block, or starting a sequence (salted) when it has none.
 */
export function extendBlockKeys(
  parent: KeyPair | null,
  tokens: ArrayLike<number>,
  blockSize: number,
  seed: BlockKeySeed,
  extras: BlockExtras | null = null,
): BlockKeyChain {
  const count = Math.floor(tokens.length / blockSize)
  const out = new Uint32Array(2 * count)
  if (parent === null)
    return chainKeys(out, tokens, blockSize, keyRoot(seed), seed.cacheSalt ?? null, count, extras)
  return chainKeys(out, tokens, blockSize, parent, null, count, extras)
}

/**
 * A 64-bit key (two 32-bit halves) folded to 53 bits, so it is an exact number (a Map key).
 * Two keys collide only if 53 bits of two independent hashes do.
 */
export function foldKey(high: number, low: number): number {
  return (high & 0x1fffff) * 4_294_967_296 + (low >>> 0)
}

/** A key as 16 hex digits (Redis field names, logs). */
export function keyHex(chain: BlockKeyChain, block: number): string {
  return (
    (chain[2 * block] as number).toString(16).padStart(8, '0') +
    (chain[2 * block + 1] as number).toString(16).padStart(8, '0')
  )
}
