import { avalanche32, mix32 } from '../../hashing/murmur-mix.ts'
import { foldKey } from '../../kv-index/block-keys.ts'

/**
 * GIE's approximate prefix hashing (GIE `P/requestcontrol/dataproducer/approximateprefix/
 * hashing.go`): no tokenizer, so a block is `blockSizeTokens × 4` bytes of the prompt's UTF-8
 * text, at most `maxBlocks` of them (the rest is cut off), each hash chained on the previous
 * one and the first seeded with the model name. What is left after the last full block is
 * hashed as one partial block (never after a cut, which falls on a block boundary), and a
 * prompt shorter than one block has no blocks at all.
 *
 * GIE uses xxhash64. Any well-mixed chained 64-bit hash finds the same matches, so this is two
 * 32-bit murmur3 lanes (no BigInt on the hot path), folded to 53 bits to be an exact Map key.
 */
export const CHARACTERS_PER_TOKEN = 4

const encoder = new TextEncoder()

function seedOf(model: string, lane: number): number {
  let h = lane
  for (let i = 0; i < model.length; i++) h = mix32(h, model.charCodeAt(i))
  return avalanche32(mix32(h, model.length))
}

/** The chained block hashes of `text`, in prompt order. */
export function hashPromptBlocks(
  text: string,
  model: string,
  blockSizeTokens: number,
  maxBlocks: number,
): number[] {
  const blockBytes = blockSizeTokens * CHARACTERS_PER_TOKEN
  const limit = blockBytes * maxBlocks
  // encodeInto stops before a character that does not fit: 4 spare bytes keep `limit` reachable.
  // The spare bytes past `length` are zero, so a partial block's last word is zero-padded.
  const bytes = new Uint8Array(Math.min(limit + 4, text.length * 3) + 3)
  const length = Math.min(encoder.encodeInto(text, bytes).written, limit)
  if (length < blockBytes) return []
  const hashes: number[] = []
  let high = seedOf(model, 0x9747b28c)
  let low = seedOf(model, 0x2f6b6579)
  for (let start = 0; start < length; start += blockBytes) {
    const end = Math.min(start + blockBytes, length)
    let h1 = high
    let h2 = low ^ 0x5bd1e995
    for (let i = start; i < end; i += 4) {
      if (i + 4 > end) bytes.fill(0, end, i + 4)
      const word =
        (bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24)
      h1 = mix32(h1, word)
      h2 = mix32(h2, word ^ 0x7f4a7c15)
    }
    // The block's length enters the hash: a partial block never equals a full one.
    high = avalanche32(h1 ^ (end - start))
    low = avalanche32(h2 ^ high)
    hashes.push(foldKey(high, low))
  }
  return hashes
}
