import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import { createApproximateRadixTree } from '../../../../shared/routing/strategies/create-approximate-radix-tree.ts'

const both = new Set(['t1', 't2'])

describe('createApproximateRadixTree', () => {
  it('counts each tenant’s characters once per node, through splits', () => {
    const tree = createApproximateRadixTree()
    for (const text of ['apple', 'apricot', 'banana']) tree.insert(text, 't1', 0)
    for (const text of ['amplify', 'application']) tree.insert(text, 't2', 0)
    // t1: a + p + pl + e + ricot + banana = 16; t2: a + mplify + p + pl + ication = 17
    expect(tree.charCount('t1')).toBe(16)
    expect(tree.charCount('t2')).toBe(17)
    expect(tree.charCount('t3')).toBe(0)
    tree.insert('apple', 't1', 1)
    expect(tree.charCount('t1')).toBe(16)
  })

  it('matches the longest prefix any eligible tenant holds, partial nodes included', () => {
    const tree = createApproximateRadixTree()
    tree.insert('hello world', 't1', 0)
    tree.insert('hello there', 't2', 0)
    const full = tree.matchPrefix('hello world!', both)
    expect([full.matchedChars, full.tenant]).toEqual([11, 't1'])
    expect(full.charsByTenant).toEqual(
      new Map([
        ['t1', 11],
        ['t2', 6],
      ]),
    )
    expect(tree.matchPrefix('hello wor', both).matchedChars).toBe(9)
    // The first tenant of the deepest node: t1 reached "hello " first.
    expect(tree.matchPrefix('hello xyz', both).tenant).toBe('t1')
    const onlyT2 = tree.matchPrefix('hello world!', new Set(['t2']))
    expect([onlyT2.matchedChars, onlyT2.tenant]).toEqual([6, 't2'])
    expect(tree.matchPrefix('xyz', both).matchedChars).toBe(0)
    expect(tree.matchPrefix('hello', new Set(['t9'])).tenant).toBeNull()
  })

  it('evicts least recently used leaves of tenants over the limit only', () => {
    const tree = createApproximateRadixTree()
    tree.insert('aaaaaaaa', 't1', 0)
    tree.insert('aaaaaaaa', 't2', 0)
    tree.insert('bbbbbbbb', 't1', 1_000)
    tree.evictTenantsBySize(10)
    expect(tree.charCount('t1')).toBe(8)
    expect(tree.charCount('t2')).toBe(8)
    expect(tree.matchPrefix('aaaaaaaa', new Set(['t1'])).matchedChars).toBe(0)
    expect(tree.matchPrefix('aaaaaaaa', new Set(['t2'])).matchedChars).toBe(8)
    expect(tree.matchPrefix('bbbbbbbb', new Set(['t1'])).matchedChars).toBe(8)
  })

  it('counts a match as an access, so the matched path survives eviction', () => {
    const tree = createApproximateRadixTree()
    tree.insert('aaaaaaaa', 't1', 0)
    tree.insert('bbbbbbbb', 't1', 1_000)
    tree.matchPrefix('aaaaaaaa', new Set(['t1'])).touch(2_000)
    tree.evictTenantsBySize(10)
    expect(tree.matchPrefix('aaaaaaaa', new Set(['t1'])).matchedChars).toBe(8)
    expect(tree.matchPrefix('bbbbbbbb', new Set(['t1'])).matchedChars).toBe(0)
    expect(tree.nodeCount()).toBe(2)
  })

  it('stays bounded by the limit per tenant after eviction, whatever was inserted', () => {
    const tree = createApproximateRadixTree()
    const draw = createSeededRandom(9)
    const shared = 's'.repeat(20_000)
    for (let i = 0; i < 60; i++) {
      const tail = Array.from({ length: 10_000 }, () => 'abc'[Math.floor(draw() * 3)]).join('')
      tree.insert(`${draw() < 0.5 ? shared : ''}${tail}`, `t${i % 3}`, i)
    }
    tree.evictTenantsBySize(25_000)
    for (const tenant of ['t0', 't1', 't2'])
      expect(tree.charCount(tenant)).toBeLessThanOrEqual(25_000)
    // Every node but the root holds at least one character of some tenant.
    expect(tree.nodeCount()).toBeLessThanOrEqual(3 * 25_000 + 1)
  })

  it('removes a tenant and the nodes only it held', () => {
    const tree = createApproximateRadixTree()
    tree.insert('shared prefix, one', 't1', 0)
    tree.insert('shared prefix, two', 't2', 0)
    tree.removeTenant('t1')
    expect(tree.charCount('t1')).toBe(0)
    expect(tree.charCount('t2')).toBe(18)
    expect(tree.matchPrefix('shared prefix, one', both)).toMatchObject({
      matchedChars: 15,
      tenant: 't2',
    })
    expect(tree.nodeCount()).toBe(3)
  })
})
