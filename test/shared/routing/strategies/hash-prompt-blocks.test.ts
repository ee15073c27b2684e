import { describe, expect, it } from 'vitest'
import { hashPromptBlocks } from '../../../../shared/routing/strategies/hash-prompt-blocks.ts'

describe('hashPromptBlocks', () => {
  it('cuts blockSizeTokens × 4 bytes per block and hashes what is left as a partial block', () => {
    expect(hashPromptBlocks('a'.repeat(63), 'm', 16, 256)).toEqual([])
    expect(hashPromptBlocks('a'.repeat(64), 'm', 16, 256)).toHaveLength(1)
    expect(hashPromptBlocks('a'.repeat(65), 'm', 16, 256)).toHaveLength(2)
    expect(hashPromptBlocks('a'.repeat(127), 'm', 16, 256)).toHaveLength(2)
    expect(hashPromptBlocks('a'.repeat(128), 'm', 16, 256)).toHaveLength(2)
    expect(hashPromptBlocks('a'.repeat(129), 'm', 8, 256)).toHaveLength(5)
  })

  it('tells a partial block from a full one and from another partial one', () => {
    const full = hashPromptBlocks('a'.repeat(128), 'm', 16, 256)
    const partial = hashPromptBlocks('a'.repeat(127), 'm', 16, 256)
    const shorter = hashPromptBlocks('a'.repeat(126), 'm', 16, 256)
    expect(partial[0]).toBe(full[0])
    expect(new Set([full[1], partial[1], shorter[1]]).size).toBe(3)
    // Zero padding does not make "a" equal "a\0".
    expect(hashPromptBlocks(`${'a'.repeat(65)}`, 'm', 16, 256)[1]).not.toBe(
      hashPromptBlocks(`${'a'.repeat(65)}\u0000`, 'm', 16, 256)[1],
    )
  })

  it('counts UTF-8 bytes, as GIE does, not UTF-16 units', () => {
    expect(hashPromptBlocks('é'.repeat(32), 'm', 16, 256)).toHaveLength(1)
    expect(hashPromptBlocks('é'.repeat(31), 'm', 16, 256)).toEqual([])
  })

  it('matches at most maxBlocks blocks, ignoring the rest of the prompt (no partial block after a cut)', () => {
    const long = 'abcdefgh'.repeat(2_500)
    expect(hashPromptBlocks(long, 'm', 16, 256)).toHaveLength(256)
    const differentTail = `${long.slice(0, 16_384)}${'z'.repeat(3_000)}`
    expect(hashPromptBlocks(differentTail, 'm', 16, 256)).toEqual(
      hashPromptBlocks(long, 'm', 16, 256),
    )
  })

  it('chains every block on the ones before it, from a root seeded with the model', () => {
    const block = 'the same 64 bytes of text, repeated twice in this one prompt....'
    expect(block).toHaveLength(64)
    const [first, second] = hashPromptBlocks(block + block, 'm', 16, 256)
    expect(first).not.toBe(second)
    const a = hashPromptBlocks(`${block}${'a'.repeat(64)}`, 'm', 16, 256)
    const b = hashPromptBlocks(`${block}${'b'.repeat(64)}`, 'm', 16, 256)
    expect(a[0]).toBe(b[0])
    expect(a[1]).not.toBe(b[1])
    expect(hashPromptBlocks(block, 'other-model', 16, 256)).not.toEqual(
      hashPromptBlocks(block, 'm', 16, 256),
    )
  })

  it('gives exact Map keys (safe integers) without collisions on distinct blocks', () => {
    const hashes = new Set<number>()
    for (let i = 0; i < 2_000; i++) {
      for (const hash of hashPromptBlocks(`${i}:`.padEnd(64, '.'), 'm', 16, 256)) {
        expect(Number.isSafeInteger(hash)).toBe(true)
        hashes.add(hash)
      }
    }
    expect(hashes.size).toBe(2_000)
  })
})
