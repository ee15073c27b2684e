import { describe, expect, it } from 'vitest'
import { LruCache } from '../../../control-plane/tokenizer/lru-cache.ts'

describe('LruCache', () => {
  it('evicts the least recently used entry past maxEntries', () => {
    const cache = new LruCache<string, number>({ maxEntries: 2 })
    cache.set('a', 1)
    cache.set('b', 2)
    expect(cache.get('a')).toBe(1)
    cache.set('c', 3)
    expect(cache.get('b')).toBeUndefined()
    expect(cache.get('a')).toBe(1)
    expect(cache.get('c')).toBe(3)
    expect(cache.stats()).toEqual({ entries: 2, weight: 2, hits: 3, misses: 1 })
  })

  it('evicts by weight and refuses an entry heavier than the budget', () => {
    const cache = new LruCache<string, string>({
      maxEntries: 10,
      maxWeight: 10,
      weigh: (key) => key.length,
    })
    cache.set('aaaa', 'x')
    cache.set('bbbb', 'y')
    cache.set('cccc', 'z')
    expect(cache.get('aaaa')).toBeUndefined()
    expect(cache.stats().weight).toBe(8)
    cache.set('d'.repeat(11), 'too big')
    expect(cache.get('d'.repeat(11))).toBeUndefined()
    expect(cache.stats()).toMatchObject({ entries: 2, weight: 8 })
    cache.set('bbbb', 'y2')
    expect(cache.stats()).toMatchObject({ entries: 2, weight: 8 })
    expect(cache.delete('bbbb')).toBe(true)
    cache.clear()
    expect(cache.stats()).toMatchObject({ entries: 0, weight: 0 })
  })

  it('keeps nothing with maxEntries 0 and rejects a bad bound', () => {
    const cache = new LruCache<string, number>({ maxEntries: 0 })
    cache.set('a', 1)
    expect(cache.get('a')).toBeUndefined()
    expect(() => new LruCache({ maxEntries: -1 })).toThrow(RangeError)
  })
})
