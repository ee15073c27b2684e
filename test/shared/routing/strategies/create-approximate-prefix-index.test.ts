import { describe, expect, it } from 'vitest'
import { createApproximatePrefixIndex } from '../../../../shared/routing/strategies/create-approximate-prefix-index.ts'

describe('createApproximatePrefixIndex', () => {
  it('counts, per pod, the blocks it holds up to the first block no pod holds', () => {
    const index = createApproximatePrefixIndex(100)
    index.add('pod-a', [1, 2, 3, 4])
    index.add('pod-b', [1, 2, 9])
    expect(index.match([1, 2, 3, 5, 4])).toEqual(
      new Map([
        ['pod-a', 3],
        ['pod-b', 2],
      ]),
    )
    expect(index.match([7, 1])).toEqual(new Map())
  })

  it('keeps at most the capacity per pod, forgetting the least recently added', () => {
    const index = createApproximatePrefixIndex(3)
    index.add('pod-a', [1, 2, 3])
    index.add('pod-a', [1])
    index.add('pod-a', [4])
    expect(index.size('pod-a')).toBe(3)
    expect(index.match([2])).toEqual(new Map())
    expect(index.match([1, 3, 4])).toEqual(new Map([['pod-a', 3]]))
  })

  it('sizes a pod’s LRU once, when its first entries arrive', () => {
    const index = createApproximatePrefixIndex(100)
    index.add('pod-a', [1, 2, 3], 2)
    index.add('pod-a', [4, 5, 6], 1_000)
    expect(index.size('pod-a')).toBe(2)
    index.add('pod-b', [1, 2, 3])
    expect(index.size('pod-b')).toBe(3)
    index.removePod('pod-a')
    index.add('pod-a', [7, 8, 9], 3)
    expect(index.size('pod-a')).toBe(3)
  })

  it('forgets a removed pod entirely', () => {
    const index = createApproximatePrefixIndex(10)
    index.add('pod-a', [1, 2])
    index.add('pod-b', [1])
    index.removePod('pod-a')
    expect(index.size('pod-a')).toBe(0)
    expect(index.match([1, 2])).toEqual(new Map([['pod-b', 1]]))
  })
})
