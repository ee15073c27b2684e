import { describe, expect, it } from 'vitest'
import {
  CpuOffloadTier,
  type OffloadedBlock,
} from '../../../../../control-plane/lab/sim/engine/cpu-offload-tier.ts'
import type { EngineKvEvent } from '../../../../../control-plane/lab/sim/engine/engine-kv-event.ts'
import type { KvCacheGroup } from '../../../../../control-plane/lab/sim/engine/kv-cache-layout.ts'

const full: KvCacheGroup = {
  index: 0,
  spec: { kind: 'full_attention', slidingWindow: null },
  blockSize: 4,
}
const window: KvCacheGroup = {
  index: 1,
  spec: { kind: 'sliding_window', slidingWindow: 8 },
  blockSize: 4,
}

const block = (hash: number, group = full): OffloadedBlock => ({
  group,
  hash: BigInt(hash),
  parent: hash > 1 ? BigInt(hash - 1) : null,
  tokenIds: [hash, hash, hash, hash],
  loraName: 'sql',
  loraId: 1,
})

describe('CpuOffloadTier', () => {
  it('announces each stored block as the OffloadingConnector’s placeholder: CPU, block_size 0, no tokens', () => {
    const events: EngineKvEvent[] = []
    const tier = new CpuOffloadTier(8, false, events)
    tier.store([block(1), block(2, window)])
    expect(events).toEqual([
      {
        type: 'BlockStored',
        medium: 'CPU',
        blockHashes: [1n],
        parentBlockHash: null,
        tokenIds: [],
        blockSize: 0,
        loraName: null,
        loraId: null,
        extraKeys: null,
        groupIdx: 0,
        kvCacheSpec: null,
      },
      expect.objectContaining({ blockHashes: [2n], blockSize: 0, groupIdx: 1 }),
    ])
  })

  it('self-describing, full-attention blocks carry their payload; sliding-window ones stay placeholders', () => {
    const events: EngineKvEvent[] = []
    const tier = new CpuOffloadTier(8, true, events)
    tier.store([block(2), block(3, window)])
    expect(events[0]).toEqual({
      type: 'BlockStored',
      medium: 'CPU',
      blockHashes: [2n],
      parentBlockHash: 1n,
      tokenIds: [2, 2, 2, 2],
      blockSize: 4,
      loraName: 'sql',
      loraId: 1,
      extraKeys: null,
      groupIdx: 0,
      kvCacheSpec: full.spec,
    })
    expect(events[1]).toMatchObject({ blockSize: 0, tokenIds: [], kvCacheSpec: null })
  })

  it('evicts the least recently used to make room, one BlockRemoved per group', () => {
    const events: EngineKvEvent[] = []
    const tier = new CpuOffloadTier(3, false, events)
    tier.store([block(1), block(2, window), block(3)])
    // A load makes block 1 the most recently used.
    expect(tier.load(0, (i) => BigInt(i + 1), 0, 5)).toBe(1)
    events.length = 0
    tier.store([block(4), block(5)])
    expect(events.slice(0, 2)).toEqual([
      { type: 'BlockRemoved', medium: 'CPU', blockHashes: [2n], groupIdx: 1 },
      { type: 'BlockRemoved', medium: 'CPU', blockHashes: [3n], groupIdx: 0 },
    ])
    expect(events.slice(2).map((e) => e.type === 'BlockStored' && e.blockHashes)).toEqual([
      [4n],
      [5n],
    ])
    expect(tier.size).toBe(3)
  })

  it('counts consecutive blocks from an index, below a limit', () => {
    const tier = new CpuOffloadTier(10, false, [])
    tier.store([block(1), block(2), block(3), block(5)])
    const hashOf = (index: number) => BigInt(index + 1)
    expect(tier.load(0, hashOf, 0, 10)).toBe(3)
    expect(tier.load(0, hashOf, 1, 2)).toBe(1)
    expect(tier.load(0, hashOf, 3, 10)).toBe(0)
    expect(tier.load(1, hashOf, 0, 10)).toBe(0)
  })

  it('stores nothing when the new blocks exceed it, and nothing twice', () => {
    const events: EngineKvEvent[] = []
    const tier = new CpuOffloadTier(2, false, events)
    tier.store([block(1), block(2), block(3)])
    expect(events).toEqual([])
    tier.store([block(1)])
    tier.store([block(1), block(2)])
    expect(events.map((e) => e.type === 'BlockStored' && e.blockHashes)).toEqual([[1n], [2n]])
  })
})
