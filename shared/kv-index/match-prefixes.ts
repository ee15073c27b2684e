import type { BlockKeyTable } from './block-key-table.ts'
import type { BlockKeyChain } from './block-keys.ts'

/**
 * For every pod slot asked about, how many leading blocks of `chain` it holds: the walk
 * goes block by block with a bitmask of the slots still matching, and a slot leaves the
 * mask at its first block it neither stored nor holds speculatively (longest consecutive
 * prefix). Per block: one hash probe and a few word operations for up to 32 pods, no
 * allocation; the speculative callback runs only for bits not covered by a stored one.
 *
 * Returns depths indexed by slot (entries for slots not asked about are meaningless).
 */
export function matchPrefixes(
  table: BlockKeyTable,
  chain: BlockKeyChain,
  slots: readonly number[],
  speculativeHeld: (slot: number, id: number) => boolean,
): Int32Array {
  const words = table.words
  const blocks = chain.length >>> 1
  const depth = new Int32Array(words * 32).fill(blocks)
  const active = new Uint32Array(words)
  let remaining = 0
  for (const slot of slots) {
    if (slot < 0) continue
    const bit = 1 << (slot & 31)
    const word = slot >>> 5
    if (((active[word] as number) & bit) === 0) remaining++
    active[word] = (active[word] as number) | bit
  }
  const stored = table.stored
  const speculative = table.speculative
  for (let block = 0; block < blocks && remaining > 0; block++) {
    const id = table.find(chain[2 * block] as number, chain[2 * block + 1] as number)
    const base = id * words
    for (let w = 0; w < words; w++) {
      const wanted = active[w] as number
      if (wanted === 0) continue
      let missing = id < 0 ? wanted : wanted & ~(stored[base + w] as number)
      if (missing === 0) continue
      let guesses = id < 0 ? 0 : missing & (speculative[base + w] as number)
      while (guesses !== 0) {
        const bit = guesses & -guesses
        guesses ^= bit
        if (speculativeHeld(w * 32 + 31 - Math.clz32(bit), id)) missing ^= bit
      }
      if (missing === 0) continue
      active[w] = wanted & ~missing
      while (missing !== 0) {
        const bit = missing & -missing
        missing ^= bit
        depth[w * 32 + 31 - Math.clz32(bit)] = block
        remaining--
      }
    }
  }
  return depth
}
