import { avalanche32, mix32 } from '../../hashing/murmur-mix.ts'

/**
 * GIE's approximate prefix hashing (GIE `P/requestcontrol/dataproducer/approximateprefix/
 * hashing.go`): no tokenizer, so a block is `blockSizeTokens × 4` bytes of the prompt's UTF-8
 * text, at most `maxBlocks` of them (the rest is ignored), each hash chained on the previous
 * one and the first seeded with the model name. A last partial block is not hashed, and a
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
  const bytes = new Uint8Array(Math.min(limit + 4, text.length * 3))
  const length = Math.min(encoder.encodeInto(text, bytes).written, limit)
  const count = Math.floor(length / blockBytes)
  const hashes = new Array<number>(count)
  let high = seedOf(model, 0x9747b28c)
  let low = seedOf(model, 0x2f6b6579)
  for (let block = 0; block < count; block++) {
    let h1 = high
    let h2 = low ^ 0x5bd1e995
    const end = (block + 1) * blockBytes
    for (let i = block * blockBytes; i < end; i += 4) {
      const word =
        (bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24)
      h1 = mix32(h1, word)
      h2 = mix32(h2, word ^ 0x7f4a7c15)
    }
    high = avalanche32(h1 ^ blockBytes)
    low = avalanche32(h2 ^ high)
    hashes[block] = (high & 0x1fffff) * 4_294_967_296 + low
  }
  return hashes
}
