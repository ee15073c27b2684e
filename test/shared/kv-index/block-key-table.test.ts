import { describe, expect, it } from 'vitest'
import { BlockKeyTable } from '../../../shared/kv-index/block-key-table.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'

describe('BlockKeyTable', () => {
  it('finds exactly the keys held, through growth and backward-shift deletions', () => {
    const random = createSeededRandom(7)
    const table = new BlockKeyTable(16, 12345)
    const reference = new Map<string, number>()
    // Few distinct low words: long probe runs, so deletions must shift entries correctly.
    const keys = Array.from({ length: 600 }, (_, i) => ({
      high: Math.floor(random() * 2 ** 32),
      low: i % 3 === 0 ? 7 : Math.floor(random() * 2 ** 32),
    }))
    for (let step = 0; step < 20_000; step++) {
      const key = keys[Math.floor(random() * keys.length)] as { high: number; low: number }
      const name = `${key.high}/${key.low}`
      const slot = Math.floor(random() * 40)
      table.ensureSlot(slot)
      const id = table.acquire(key.high, key.low)
      if (reference.has(name)) expect(id).toBe(reference.get(name))
      // Every held key has exactly bit 3 set; clearing it frees the entry.
      table.setBit(table.stored, id, 3)
      if (random() < 0.55) {
        reference.set(name, id)
      } else {
        table.clearBit(table.stored, id, 3)
        reference.delete(name)
        expect(table.find(key.high, key.low)).toBe(-1)
      }
    }
    for (const key of keys) {
      const id = table.find(key.high, key.low)
      expect(id).toBe(reference.get(`${key.high}/${key.low}`) ?? -1)
      if (id >= 0) {
        expect(table.keyHigh[id]).toBe(key.high)
        expect(table.keyLow[id]).toBe(key.low)
      }
    }
    expect(table.size).toBe(reference.size)
  })

  it('keeps every bit when the bitsets widen for more pod slots', () => {
    const table = new BlockKeyTable(16, 0)
    const id = table.acquire(1, 2)
    table.setBit(table.stored, id, 31)
    table.setBit(table.speculative, id, 0)
    table.ensureSlot(100)
    table.setBit(table.stored, id, 100)
    expect([31, 100].map((slot) => table.hasBit(table.stored, id, slot))).toEqual([true, true])
    expect(table.hasBit(table.speculative, id, 0)).toBe(true)
    expect(table.hasBit(table.stored, id, 0)).toBe(false)
    table.clearBit(table.stored, id, 31)
    table.clearBit(table.stored, id, 100)
    expect(table.find(1, 2)).toBe(id)
    table.clearBit(table.speculative, id, 0)
    expect(table.find(1, 2)).toBe(-1)
  })
})
