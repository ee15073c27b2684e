import { describe, expect, it } from 'vitest'
import { encodeEventBatch } from '../../../control-plane/kv-events/encode-event-batch.ts'
import type {
  BlockStored,
  EventBatch,
  KvCacheEvent,
} from '../../../control-plane/kv-events/kv-cache-event.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { docBatch, docExample, hex } from './wire-example.ts'

const stored = docBatch.events[0] as BlockStored
const tsHex = 'cb41d954fc40200000'
/** A batch of one event at the example's ts and dp 0, so only the event bytes vary. */
const batchOf = (event: KvCacheEvent): EventBatch => ({
  ts: docBatch.ts,
  events: [event],
  dataParallelRank: 0,
})
const inBatch = (eventHex: string) => `93${tsHex}91${eventHex}00`
/** The bytes of the example's one event, without the batch around it. */
const eventOf = (batchHex: string) => batchHex.slice(2 + tsHex.length + 2, -2)
const str = (text: string) => Buffer.from(text).toString('hex')

describe('encodeEventBatch reproduces docs/vllm-wire.md §1.6 byte for byte', () => {
  it('legacy array encoding', () => {
    expect(hex(encodeEventBatch(docBatch, 'array'))).toBe(docExample.legacy)
  })

  it('map encoding', () => {
    expect(hex(encodeEventBatch(docBatch, 'map'))).toBe(docExample.map)
  })

  it('BlockRemoved, legacy: group_idx (a trailing default) is omitted', () => {
    const removed: KvCacheEvent = {
      type: 'BlockRemoved',
      blockHashes: [0x2ceabcfae6d332ean],
      medium: 'GPU',
    }
    expect(hex(encodeEventBatch(batchOf(removed), 'array'))).toBe(
      inBatch(docExample.blockRemovedLegacy),
    )
    // Map: the same fields, keyed, "type" first.
    expect(hex(encodeEventBatch(batchOf(removed), 'map'))).toBe(
      inBatch(
        `83a474797065ac${str('BlockRemoved')}ac${str('block_hashes')}91cf2ceabcfae6d332eaa6${str('medium')}a3${str('GPU')}`,
      ),
    )
  })

  it('AllBlocksCleared in both encodings', () => {
    const cleared: KvCacheEvent = { type: 'AllBlocksCleared' }
    expect(hex(encodeEventBatch(batchOf(cleared), 'array'))).toBe(
      inBatch(docExample.allBlocksClearedLegacy),
    )
    expect(hex(encodeEventBatch(batchOf(cleared), 'map'))).toBe(
      inBatch(docExample.allBlocksClearedMap),
    )
  })
})

describe('encodeEventBatch follows msgspec omit_defaults', () => {
  it('writes a dp rank of 0 but omits a null one (trailing default of the array-like batch)', () => {
    const bytes = encodeEventBatch({ ...docBatch, dataParallelRank: null }, 'array')
    expect(hex(bytes)).toBe(`92${docExample.legacy.slice(2, -2)}`)
  })

  it('legacy arrays drop only trailing defaults: a set group_idx keeps extra_keys as nil', () => {
    const bytes = hex(encodeEventBatch(batchOf({ ...stored, groupIdx: 3 }), 'array'))
    const legacyEvent = eventOf(docExample.legacy)
    // 9a = tag + 9 fields; after lora_name: extra_keys nil, group_idx 3.
    expect(bytes).toBe(inBatch(`9a${legacyEvent.slice(2)}c003`))
  })

  it('maps drop every field equal to its default, wherever it is', () => {
    const bytes = hex(encodeEventBatch(batchOf({ ...stored, groupIdx: 3 }), 'map'))
    const mapEvent = eventOf(docExample.map)
    expect(bytes).toBe(inBatch(`89${mapEvent.slice(2)}a9${str('group_idx')}03`))
  })

  it('treats an explicit null like an absent default, and writes required nulls', () => {
    const withNulls: BlockStored = {
      ...stored,
      extraKeys: null,
      groupIdx: null,
      kvCacheSpecKind: null,
      kvCacheSpecSlidingWindow: null,
    }
    expect(hex(encodeEventBatch(batchOf(withNulls), 'array'))).toBe(docExample.legacy)
    expect(hex(encodeEventBatch(batchOf(withNulls), 'map'))).toBe(docExample.map)
  })

  it('writes every BlockStored field in vLLM order when all are set', () => {
    const full: BlockStored = {
      ...stored,
      extraKeys: [['lora-a', 7], null],
      groupIdx: 1,
      kvCacheSpecKind: 'sliding_window',
      kvCacheSpecSlidingWindow: 4096,
    }
    // extra_keys [[lora-a, 7], nil], group_idx 1, kind "sliding_window", window 4096.
    const tail = `9292a6${str('lora-a')}07c0` + `01ae${str('sliding_window')}cd1000`
    const legacyEvent = eventOf(docExample.legacy)
    expect(hex(encodeEventBatch(batchOf(full), 'array'))).toBe(
      inBatch(`9c${legacyEvent.slice(2)}${tail}`),
    )
  })
})

describe('encodeEventBatch writes numbers as msgspec does', () => {
  it('ts is always float64, even when integer-valued', () => {
    const bytes = encodeEventBatch({ ts: 1_700_000_000, events: [], dataParallelRank: null }, 'map')
    expect(hex(bytes)).toBe('92cb41d954fc4000000090')
  })

  it('hashes take the smallest unsigned form: uint64 (cf) from 2^32, even below 2^63', () => {
    const removed = (hash: bigint): KvCacheEvent => ({
      type: 'BlockRemoved',
      blockHashes: [hash],
      medium: null,
    })
    const hashHex = (hash: bigint) => {
      const bytes = hex(encodeEventBatch(batchOf(removed(hash)), 'array'))
      const [before, after] = [`93${tsHex}9193ac${str('BlockRemoved')}91`, 'c000']
      expect(bytes.startsWith(before) && bytes.endsWith(after)).toBe(true)
      return bytes.slice(before.length, -after.length)
    }
    expect(hashHex(5n)).toBe('05')
    expect(hashHex(0xffn)).toBe('ccff')
    expect(hashHex(0x1_0000_0000n)).toBe('cf0000000100000000')
    expect(hashHex(0x2ceabcfae6d332ean)).toBe('cf2ceabcfae6d332ea')
    expect(hashHex(0x8000_0000_0000_0001n)).toBe('cf8000000000000001')
    expect(hashHex(0xffff_ffff_ffff_ffffn)).toBe('cfffffffffffffffff')
  })

  it('refuses a hash that does not fit in 64 bits', () => {
    const tooBig: KvCacheEvent = { type: 'BlockRemoved', blockHashes: [1n << 64n], medium: null }
    expect(() => encodeEventBatch(batchOf(tooBig), 'map')).toThrow(KinfError)
  })
})
