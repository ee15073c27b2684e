import { describe, expect, it } from 'vitest'
import {
  CpuOffloadTier,
  type OffloadedBlock,
} from '../../../../../control-plane/lab/sim/engine/cpu-offload-tier.ts'
import type { EngineKvEvent } from '../../../../../control-plane/lab/sim/engine/engine-kv-event.ts'
import { HostLink } from '../../../../../control-plane/lab/sim/engine/host-link.ts'
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

/** A tier whose blocks take 1 ms each way (1 MB blocks over a 1 GB/s link). */
function tier(capacity: number, selfDescribing = false) {
  const events: EngineKvEvent[] = []
  const cpu = new CpuOffloadTier({
    capacity,
    selfDescribing,
    events,
    link: new HostLink(1e9),
    blockBytes: () => 1e6,
  })
  return { cpu, events }
}

/** Stores blocks and lets the copies complete. */
function storeNow(cpu: CpuOffloadTier, blocks: OffloadedBlock[], atMs = 0) {
  cpu.store(blocks)
  cpu.submitStores(atMs)
  cpu.settle(atMs + 1_000)
}

describe('CpuOffloadTier', () => {
  it('announces each stored block as the OffloadingConnector’s placeholder: CPU, block_size 0, no tokens', () => {
    const { cpu, events } = tier(8)
    storeNow(cpu, [block(1), block(2, window)])
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
    const { cpu, events } = tier(8, true)
    storeNow(cpu, [block(2), block(3, window)])
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
    const { cpu, events } = tier(3)
    storeNow(cpu, [block(1), block(2, window), block(3)])
    // A lookup makes block 1 the most recently used.
    expect(cpu.lookup(0, (i) => BigInt(i + 1), 0, 5)).toEqual({ blocks: 1, deferred: false })
    events.length = 0
    storeNow(cpu, [block(4), block(5)])
    expect(events.slice(0, 2)).toEqual([
      { type: 'BlockRemoved', medium: 'CPU', blockHashes: [2n], groupIdx: 1 },
      { type: 'BlockRemoved', medium: 'CPU', blockHashes: [3n], groupIdx: 0 },
    ])
    expect(events.slice(2).map((e) => e.type === 'BlockStored' && e.blockHashes)).toEqual([
      [4n],
      [5n],
    ])
    expect(cpu.size).toBe(3)
  })

  it('counts consecutive blocks from an index, below a limit', () => {
    const { cpu } = tier(10)
    storeNow(cpu, [block(1), block(2), block(3), block(5)])
    const hashOf = (index: number) => BigInt(index + 1)
    expect(cpu.lookup(0, hashOf, 0, 10).blocks).toBe(3)
    expect(cpu.lookup(0, hashOf, 1, 2).blocks).toBe(1)
    expect(cpu.lookup(0, hashOf, 3, 10).blocks).toBe(0)
    expect(cpu.lookup(1, hashOf, 0, 10).blocks).toBe(0)
  })

  it('stores nothing when the new blocks exceed it, and nothing twice', () => {
    const { cpu, events } = tier(2)
    storeNow(cpu, [block(1), block(2), block(3)])
    expect(events).toEqual([])
    storeNow(cpu, [block(1)])
    storeNow(cpu, [block(1), block(2)])
    expect(events.map((e) => e.type === 'BlockStored' && e.blockHashes)).toEqual([[1n], [2n]])
  })

  it('announces a block stored only when its copy completes, and defers lookups until then', () => {
    const { cpu, events } = tier(8)
    const hashOf = (index: number) => BigInt(index + 1)
    cpu.store([block(1), block(2)])
    cpu.submitStores(10)
    // Two 1 MB blocks at 1 GB/s: 2 ms after the step that computed them ends.
    cpu.settle(11.9)
    expect(events).toEqual([])
    expect(cpu.lookup(0, hashOf, 0, 5)).toEqual({ blocks: 2, deferred: true })
    expect(cpu.nextTransferEndMs).toBe(12)
    cpu.settle(12)
    expect(events.map((e) => e.type === 'BlockStored' && e.blockHashes)).toEqual([[1n], [2n]])
    expect(cpu.lookup(0, hashOf, 0, 5)).toEqual({ blocks: 2, deferred: false })
    expect(cpu.nextTransferEndMs).toBeNull()
  })

  it('queues copies each way behind the previous ones, loads apart from stores', () => {
    const { cpu } = tier(8)
    const hashOf = (index: number) => BigInt(index + 1)
    storeNow(cpu, [block(1), block(2), block(3)])
    expect(cpu.load(0, hashOf, 0, 2, 5_000)).toBe(5_002)
    expect(cpu.load(0, hashOf, 2, 1, 5_001)).toBe(5_003)
    cpu.store([block(4)])
    cpu.submitStores(5_000)
    expect(cpu.nextTransferEndMs).toBe(5_001)
    expect(cpu.loads).toBe(2)
  })

  it('keeps blocks being stored or loaded: it stores nothing when only those could make room', () => {
    const { cpu, events } = tier(2)
    const hashOf = (index: number) => BigInt(index + 1)
    storeNow(cpu, [block(1)])
    cpu.load(0, hashOf, 0, 1, 2_000)
    cpu.store([block(2)])
    events.length = 0
    // Block 1 is loading, block 2 still being stored: no room for block 3.
    cpu.store([block(3)])
    expect(events).toEqual([])
    expect(cpu.lookup(0, hashOf, 0, 1)).toEqual({ blocks: 1, deferred: true })
    cpu.submitStores(2_000)
    cpu.settle(2_001)
    cpu.store([block(3)])
    // Both idle now; block 1 was looked up since, so block 2 is the least recently used.
    expect(events.at(-1)).toEqual({
      type: 'BlockRemoved',
      medium: 'CPU',
      blockHashes: [2n],
      groupIdx: 0,
    })
  })
})
