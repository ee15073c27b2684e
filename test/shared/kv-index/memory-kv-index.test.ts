import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import {
  createMemoryKvIndex,
  type MemoryKvIndexOptionsInput,
} from '../../../shared/kv-index/memory-kv-index.ts'
import { describeKvIndexConformance } from '../../support/kv-index/kv-index-conformance.ts'
import {
  chainOf,
  engineHashes,
  promptTokens,
  removed,
  storedRange,
} from '../../support/kv-index/kv-index-fixtures.ts'

describeKvIndexConformance('memory', async () => createMemoryKvIndex({ initialBlocks: 16 }))

describe('createMemoryKvIndex limits', () => {
  const tokens = promptTokens(6)
  const hashes = engineHashes(6, 0n)
  const chain = chainOf(tokens)

  it('forgets the oldest engine hashes of a pod beyond maxEngineHashesPerPod', async () => {
    const index = createMemoryKvIndex({ maxEngineHashesPerPod: 4 })
    await index.apply('pod-a', 'model-a', storedRange(tokens, hashes, 0, 6, 6))
    expect(await index.size()).toEqual({ entries: 4, pods: 1 })
    expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
    expect(await index.lookup(chain.subarray(4), ['pod-a'], 0)).toEqual([4])
    const result = await index.apply('pod-a', 'model-a', [removed(hashes[0] as bigint)])
    expect(result.unknownRemovals).toBe(1)
  })

  it('evicts the oldest speculative entries beyond maxSpeculative', async () => {
    const index = createMemoryKvIndex({ maxSpeculative: 4 })
    await index.addSpeculative('pod-a', chain, 6, 1_000)
    expect(await index.size()).toEqual({ entries: 4, pods: 1 })
    expect(await index.lookup(chain.subarray(4), ['pod-a'], 0)).toEqual([4])
    await index.addSpeculative('pod-b', chain, 4, 2_000)
    expect(await index.size()).toEqual({ entries: 4, pods: 1 })
    expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([0, 4])
  })

  it('refuses more than maxPods pods, and frees the place of a dropped one', async () => {
    const index = createMemoryKvIndex({ maxPods: 2 })
    const events = storedRange(tokens, hashes, 0, 2, 2)
    await index.apply('pod-a', 'model-a', events)
    await index.addSpeculative('pod-b', chain, 1, 1_000)
    const refused = index.apply('pod-c', 'model-a', events)
    await expect(refused).rejects.toThrow(KinfError)
    await expect(refused).rejects.toMatchObject({ code: 'invalid_config' })
    // Removals only never take a place.
    expect((await index.apply('pod-c', 'model-a', [removed(1n)])).unknownRemovals).toBe(1)
    await index.dropPod('pod-a')
    await index.apply('pod-c', 'model-a', events)
    expect(await index.lookup(chain, ['pod-a', 'pod-b', 'pod-c'], 0)).toEqual([0, 1, 2])
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses a limit of %d', (limit) => {
    expect(() => createMemoryKvIndex({ maxPods: limit })).toThrow(KinfError)
    expect(() => createMemoryKvIndex({ maxEngineHashesPerPod: limit })).toThrow(KinfError)
    expect(() => createMemoryKvIndex({ maxSpeculative: limit })).toThrow(KinfError)
  })

  it('names the bad option in an invalid_config error', () => {
    const cases: [MemoryKvIndexOptionsInput, string][] = [
      [{ maxPods: 0 }, 'kv index: maxPods must be a positive integer'],
      [
        { maxEngineHashesPerPod: 2 ** 60 },
        'kv index: maxEngineHashesPerPod must be a positive integer',
      ],
      [{ purgePerLookup: -1 }, 'kv index: purgePerLookup must be a non-negative integer'],
      [{ initialBlocks: 0 }, 'kv index: initialBlocks must be a positive integer'],
      [{ tableSeed: 0.5 }, 'kv index: tableSeed must be an integer'],
      [{ maxPod: 4 } as never, 'kv index: Unrecognized key: "maxPod"'],
    ]
    for (const [options, message] of cases) {
      expect(() => createMemoryKvIndex(options)).toThrow(
        expect.objectContaining({ code: 'invalid_config', message }),
      )
    }
  })

  it('purges nothing on lookup with purgePerLookup 0', async () => {
    const index = createMemoryKvIndex({ purgePerLookup: 0 })
    await index.addSpeculative('pod-a', chain, 2, 1_000)
    expect(await index.lookup(chain, ['pod-a'], 2_000)).toEqual([0])
    expect(await index.size()).toEqual({ entries: 2, pods: 1 })
  })

  it('grows from a tiny table and gives every entry back', async () => {
    const index = createMemoryKvIndex({ initialBlocks: 16 })
    const long = promptTokens(3_000, 5)
    const longHashes = engineHashes(3_000, 10_000n)
    const longChain = chainOf(long)
    for (const pod of ['a', 'b', 'c']) {
      await index.apply(pod, 'model-a', storedRange(long, longHashes, 0, 3_000, 64))
    }
    expect(await index.lookup(longChain, ['a', 'b', 'c'], 0)).toEqual([3_000, 3_000, 3_000])
    for (const pod of ['a', 'b']) await index.apply(pod, 'model-a', [removed(...longHashes)])
    await index.dropPod('c')
    expect(await index.size()).toEqual({ entries: 0, pods: 0 })
    await index.apply('d', 'model-a', storedRange(long, longHashes, 0, 100, 64))
    expect(await index.lookup(longChain, ['a', 'd'], 0)).toEqual([0, 100])
  })
})
