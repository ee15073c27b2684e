import type { BlockExtras } from './block-keys.ts'

/** A multimodal input's placeholder tokens in a prompt, and the identifier vLLM hashes. */
export interface MmPlacement {
  identifier: string
  /** First token of the input's placeholder range. */
  offset: number
  /** Tokens of the range. */
  length: number
}

/**
 * One multimodal extra key as a block's extras name it: the input's identifier and its
 * offset relative to the block's first token (negative when the input began in an earlier
 * block). The index reads the same string from a pod's `extra_keys`, plain or typed
 * (control-plane/kv-events/read-extra-keys.ts), so router and pod keys agree.
 */
export function mmExtraKey(identifier: string, offset: number | bigint): string {
  return `mm\u0000${identifier}\u0000${offset}`
}

/** How the keys of one block are joined into its BlockExtras string. */
export const extraKeySeparator = '\u0001'

/**
 * The BlockExtras of a prompt's first `blockCount` blocks of `blockSize` tokens: for each
 * block, every input whose range overlaps it, in prompt order, as vLLM's block hasher
 * lists them (`_gen_mm_extra_hash_keys` in vLLM's kv_cache_utils.py, docs/vllm-wire.md
 * §1.9); null when no block has one. `placements` must be sorted by offset, as vLLM
 * sorts a request's mm_features.
 */
export function mmBlockExtras(
  placements: readonly MmPlacement[],
  blockSize: number,
  blockCount: number,
): BlockExtras | null {
  if (placements.length === 0 || blockCount <= 0) return null
  let extras: (string | null)[] | null = null
  for (let block = 0; block < blockCount; block++) {
    const start = block * blockSize
    const end = start + blockSize
    const keys: string[] = []
    for (const { identifier, offset, length } of placements) {
      if (offset >= end) break
      if (start < offset + length) keys.push(mmExtraKey(identifier, offset - start))
    }
    if (keys.length === 0) continue
    extras ??= new Array<string | null>(blockCount).fill(null)
    extras[block] = keys.join(extraKeySeparator)
  }
  return extras
}
