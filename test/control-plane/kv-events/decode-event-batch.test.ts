import { encode } from '@msgpack/msgpack'
import { describe, expect, it } from 'vitest'
import { decodeEventBatch } from '../../../control-plane/kv-events/decode-event-batch.ts'
import { encodeEventBatch } from '../../../control-plane/kv-events/encode-event-batch.ts'
import type { EventBatch } from '../../../control-plane/kv-events/kv-cache-event.ts'
import { createMsgpackWriter } from '../../../control-plane/kv-events/msgpack-writer.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { docBatch, docExample, unhex } from './wire-example.ts'

/** msgpack of any plain value, for hand-made wire input. */
const pack = (value: unknown) => {
  const writer = createMsgpackWriter()
  writer.value(value)
  return writer.finish()
}
const str = (text: string) =>
  `${(0xa0 + text.length).toString(16)}${Buffer.from(text).toString('hex')}`
/** A batch [1.5, [BlockRemoved([hash]), 'GPU'], 0] with the hash given as raw msgpack bytes. */
const removedWithHash = (hashHex: string) =>
  unhex(`93cb3ff80000000000009193${str('BlockRemoved')}91${hashHex}${str('GPU')}00`)
const hashOf = (hashHex: string) => {
  const event = decodeEventBatch(removedWithHash(hashHex)).events[0]
  if (event?.type !== 'BlockRemoved') throw new Error('expected BlockRemoved')
  return event.blockHashes[0]
}
const invalid = (bytes: Uint8Array) => {
  try {
    decodeEventBatch(bytes)
  } catch (error) {
    if (KinfError.isInstance(error) && error.code === 'invalid_request') return error.message
    throw error
  }
  throw new Error('decoded without error')
}

describe('decodeEventBatch reads both vLLM encodings', () => {
  it('the legacy array example of docs/vllm-wire.md §1.6', () => {
    expect(decodeEventBatch(unhex(docExample.legacy))).toEqual(docBatch)
  })

  it('the map example of docs/vllm-wire.md §1.6', () => {
    expect(decodeEventBatch(unhex(docExample.map))).toEqual(docBatch)
  })

  it('a map-shaped outer batch (EventBatch without array_like)', () => {
    const bytes = pack({
      ts: 12.25,
      events: [{ type: 'AllBlocksCleared' }, ['BlockRemoved', [7], 'CPU', 2]],
      data_parallel_rank: 3,
    })
    expect(decodeEventBatch(bytes)).toEqual({
      ts: 12.25,
      events: [
        { type: 'AllBlocksCleared' },
        { type: 'BlockRemoved', blockHashes: [7n], medium: 'CPU', groupIdx: 2 },
      ],
      dataParallelRank: 3,
    })
  })

  it('round-trips every field through both encodings', () => {
    const batch: EventBatch = {
      ts: 1_789_095_808.83,
      events: [
        {
          type: 'BlockStored',
          blockHashes: [0xffff_ffff_ffff_ffffn, 0x8000_0000_0000_0001n, 1n],
          parentBlockHash: 0x8000_0000_0000_0000n,
          tokenIds: [0, 151_643, 2 ** 31],
          blockSize: 1,
          loraId: 4,
          medium: 'GPU',
          loraName: 'adapter',
          extraKeys: [['mm-hash', 3], null, null],
          groupIdx: 1,
          kvCacheSpecKind: 'sliding_window',
          kvCacheSpecSlidingWindow: 4096,
        },
        { type: 'BlockRemoved', blockHashes: [0xffff_ffff_ffff_fffen], medium: null, groupIdx: 0 },
        { type: 'AllBlocksCleared' },
      ],
      dataParallelRank: null,
    }
    for (const encoding of ['map', 'array'] as const) {
      expect(decodeEventBatch(encodeEventBatch(batch, encoding))).toEqual(batch)
    }
  })
})

describe('decodeEventBatch reads the typed extra keys of vLLM PR #55488', () => {
  it('in both encodings, event_version read past in an array where extra_keys would be', () => {
    const extraKeys = [
      [
        { type: 'lora', name: 'ad' },
        { type: 'cache_salt', salt: 'tenant' },
      ],
      [{ type: 'mm', modality: 'image', hash: 'img', block_offset: -3 }],
    ]
    const published = {
      ts: 2.5,
      events: [
        {
          type: 'BlockStored' as const,
          blockHashes: [1n, 2n],
          parentBlockHash: null,
          tokenIds: [1, 2, 3, 4],
          blockSize: 2,
          loraId: 1,
          medium: 'GPU',
          loraName: 'ad',
          eventVersion: 1,
          extraKeys,
          groupIdx: 0,
          kvCacheSpecKind: 'full_attention',
        },
      ],
      dataParallelRank: 0,
    }
    for (const encoding of ['map', 'array'] as const) {
      const [event] = decodeEventBatch(encodeEventBatch(published, encoding)).events
      expect(event, encoding).toEqual({
        type: 'BlockStored',
        blockHashes: [1n, 2n],
        parentBlockHash: null,
        tokenIds: [1, 2, 3, 4],
        blockSize: 2,
        loraId: 1,
        medium: 'GPU',
        loraName: 'ad',
        extraKeys,
        groupIdx: 0,
        kvCacheSpecKind: 'full_attention',
      })
    }
  })
})

describe('decodeEventBatch reads hashes as unsigned 64-bit bigints', () => {
  it.each([
    ['positive fixint', '05', 5n],
    ['uint8', 'ccff', 0xffn],
    ['uint16', 'cdffff', 0xffffn],
    ['uint32', 'ceffffffff', 0xffff_ffffn],
    ['uint64 max', 'cfffffffffffffffff', 0xffff_ffff_ffff_ffffn],
    ['uint64 just above 2^63', 'cf8000000000000001', 0x8000_0000_0000_0001n],
    ['uint64 below 2^63', 'cf2ceabcfae6d332ea', 0x2ceabcfae6d332ean],
    ['int64 -1 (a signed writer of 2^64-1)', 'd3ffffffffffffffff', 0xffff_ffff_ffff_ffffn],
    ['int64 negative', 'd38000000000000001', 0x8000_0000_0000_0001n],
    ['int64 positive', 'd32ceabcfae6d332ea', 0x2ceabcfae6d332ean],
    ['negative fixint', 'ff', 0xffff_ffff_ffff_ffffn],
    ['int8', 'd080', 0xffff_ffff_ffff_ff80n],
    ['int32', 'd280000000', 0xffff_ffff_8000_0000n],
    ['bin of 3 bytes', 'c403010203', 0x010203n],
    [
      'bin of a 32-byte digest (last 8 bytes)',
      `c420${'ab'.repeat(24)}2ceabcfae6d332ea`,
      0x2ceabcfae6d332ean,
    ],
  ])('%s', (_name, hashHex, expected) => {
    const hash = hashOf(hashHex)
    expect(typeof hash).toBe('bigint')
    expect(hash).toBe(expected)
  })

  it('keeps every bit above 2^53', () => {
    const hash = hashOf('cf8000000000000001')
    expect(hash).not.toBe(BigInt(Number(hash)))
  })

  it('skips an event with an empty bin or a non-integer hash, counting why', () => {
    for (const bad of ['c400', 'cb3ff8000000000000', str('abc')]) {
      const batch = decodeEventBatch(removedWithHash(bad))
      expect(batch.events).toEqual([])
      expect(batch.skipped).toEqual([
        {
          index: 0,
          reason: 'invalid_block_hashes',
          message: expect.stringMatching(/^kv-events: events\[0\]\.blockHashes\[0\]: /),
        },
      ])
    }
  })
})

describe('decodeEventBatch is liberal in what it accepts', () => {
  it('ignores unknown map keys and extra trailing array fields', () => {
    const bytes = pack([
      2.5,
      [
        { type: 'BlockRemoved', block_hashes: [1], medium: 'GPU', locality: 'x', session_id: 9 },
        ['BlockRemoved', [2], 'GPU', null, 'future', [1, 2]],
      ],
      0,
      'future batch field',
    ])
    expect(decodeEventBatch(bytes).events).toEqual([
      { type: 'BlockRemoved', blockHashes: [1n], medium: 'GPU' },
      { type: 'BlockRemoved', blockHashes: [2n], medium: 'GPU', groupIdx: null },
    ])
  })

  it('skips events of types it does not know, keeping the others', () => {
    const bytes = pack([1, [['BlockUpdated', 1], { type: 'constructor' }, ['AllBlocksCleared']]])
    const unknown = (index: number) => ({
      index,
      reason: 'unknown_type',
      message: `kv-events: events[${index}] is of a type not known here`,
    })
    expect(decodeEventBatch(bytes)).toEqual({
      ts: 1,
      events: [{ type: 'AllBlocksCleared' }],
      dataParallelRank: null,
      skipped: [unknown(0), unknown(1)],
    })
  })

  it('reads legacy events of releases before medium and lora_name as null', () => {
    const bytes = pack([
      1,
      [
        ['BlockStored', [1], null, [5, 6], 2, null],
        ['BlockRemoved', [1]],
      ],
    ])
    expect(decodeEventBatch(bytes).events).toEqual([
      {
        type: 'BlockStored',
        blockHashes: [1n],
        parentBlockHash: null,
        tokenIds: [5, 6],
        blockSize: 2,
        loraId: null,
        medium: null,
        loraName: null,
      },
      { type: 'BlockRemoved', blockHashes: [1n], medium: null },
    ])
  })

  it('reads ints sent as int64/uint64 (Go encoders without compact ints)', () => {
    const int64 = (n: number) => `d3${n.toString(16).padStart(16, '0')}`
    const bytes = unhex(
      `93${int64(1_700_000_000)}9196${str('BlockStored')}91${int64(7)}c0` +
        `92${int64(1)}cf0000000000000002${int64(2)}c0${int64(0)}`,
    )
    expect(decodeEventBatch(bytes)).toEqual({
      ts: 1_700_000_000,
      events: [
        {
          type: 'BlockStored',
          blockHashes: [7n],
          parentBlockHash: null,
          tokenIds: [1, 2],
          blockSize: 2,
          loraId: null,
          medium: null,
          loraName: null,
        },
      ],
      dataParallelRank: 0,
    })
  })
})

/**
 * vLLM's own shapes, written with @msgpack/msgpack (not the project's encoder): a map event
 * of `vllm/distributed/kv_events.py` with msgspec's omit_defaults, and the placeholder
 * BlockStored of the OffloadingConnector
 * (`vllm/distributed/kv_transfer/kv_connector/v1/offloading/events.py`, `_placeholder_stored`).
 */
const vllm = (events: unknown[]) => encode([1_789_095_808.8, events, 0], { useBigInt64: true })
const gpuStored = {
  type: 'BlockStored',
  block_hashes: [15_760_518_052_499_183_552n],
  parent_block_hash: null,
  token_ids: [151_644, 872, 198, 9064],
  block_size: 4,
  lora_id: null,
  medium: 'GPU',
  lora_name: null,
  extra_keys: [null],
  group_idx: 0,
  kv_cache_spec_kind: 'full_attention',
}
const placeholder = (medium: string) => ({
  type: 'BlockStored',
  block_hashes: [77n],
  parent_block_hash: null,
  token_ids: [],
  lora_id: null,
  block_size: 0,
  medium,
  lora_name: null,
  group_idx: 0,
})

describe('decodeEventBatch skips one event it cannot read, never its batch', () => {
  it('keeps the good events around malformed ones and says why each was left out', () => {
    const batch = decodeEventBatch(
      vllm([
        gpuStored,
        5,
        { block_hashes: [1] },
        [1, [1]],
        ['BlockStored', [1], null, [1]],
        { ...gpuStored, block_size: 0 },
        { ...gpuStored, token_ids: [1.5] },
        ['BlockRemoved', [1], 5],
        { type: 'BlockRemoved', block_hashes: [9n], medium: 'GPU', group_idx: 0 },
      ]),
    )
    expect(batch.events.map((event) => event.type)).toEqual(['BlockStored', 'BlockRemoved'])
    expect(batch.skipped?.map(({ index, reason }) => [index, reason])).toEqual([
      [1, 'not_an_event'],
      [2, 'no_type'],
      [3, 'no_type'],
      [4, 'invalid_block_size'],
      [5, 'invalid_block_size'],
      [6, 'invalid_token_ids'],
      [7, 'invalid_medium'],
    ])
    expect(batch.skipped?.[0]?.message).toBe('kv-events: events[1] is a number')
    expect(batch.skipped?.[4]?.message).toBe('kv-events: events[5].blockSize: 0 on the GPU tier')
    expect(batch.skipped?.[5]?.message).toMatch(/^kv-events: events\[6\]\.tokenIds\[0\]: /)
  })

  it.each(['CPU', 'STORAGE', 'FS', 'OBJ'])(
    "accepts the offloading connector's %s placeholder: block_size 0, no token ids",
    (medium) => {
      const batch = decodeEventBatch(
        vllm([
          gpuStored,
          placeholder(medium),
          { type: 'BlockRemoved', block_hashes: [77n], medium },
        ]),
      )
      expect(batch.skipped).toBeUndefined()
      expect(batch.events).toEqual([
        expect.objectContaining({ type: 'BlockStored', medium: 'GPU', blockSize: 4 }),
        {
          type: 'BlockStored',
          blockHashes: [77n],
          parentBlockHash: null,
          tokenIds: [],
          blockSize: 0,
          loraId: null,
          medium,
          loraName: null,
          groupIdx: 0,
        },
        { type: 'BlockRemoved', blockHashes: [77n], medium },
      ])
    },
  )

  it('a batch whose every event is unreadable is an empty batch, not an error', () => {
    const batch = decodeEventBatch(vllm(['x', null]))
    expect(batch.events).toEqual([])
    expect(batch.skipped?.map((skipped) => skipped.reason)).toEqual([
      'not_an_event',
      'not_an_event',
    ])
  })
})

describe('decodeEventBatch refuses malformed input with KinfError(invalid_request)', () => {
  it('every truncation of both examples', () => {
    for (const example of [docExample.legacy, docExample.map]) {
      const bytes = unhex(example)
      for (let length = 0; length < bytes.length; length++) invalid(bytes.subarray(0, length))
    }
  })

  it('trailing bytes after the batch', () => {
    expect(invalid(unhex(`${docExample.legacy}00`))).toMatch(/Extra 1/)
  })

  it.each([
    ['a batch that is a string', pack('batch'), /batch is a string/],
    ['events that are not an array', pack([1, { a: 1 }]), /events is a map/],
    ['a string ts', pack(['now', []]), /ts/],
    ['a NaN ts', pack([Number.NaN, []]), /ts/],
    ['a bigint rank beyond 2^53', unhex('930190cfffffffffffffffff'), /dataParallelRank/],
    ['a "__proto__" map key', unhex('81a95f5f70726f746f5f5f80'), /__proto__/],
    ['an array claiming 2^32-1 elements', unhex('93cb3ff8000000000000ddffffffff'), /array length/],
    ['a map claiming 2^32-1 entries', unhex('dfffffffff'), /map length/],
    ['a str claiming 4 GiB', unhex('dbffffffff41'), /not msgpack/],
    ['a bin claiming 4 GiB', unhex('c6ffffffff41'), /not msgpack/],
    ['an unknown type byte', unhex('c1'), /not msgpack/],
  ])('%s', (_name, bytes, message) => {
    expect(invalid(bytes)).toMatch(message)
  })

  it('100 000 nested arrays', () => {
    invalid(new Uint8Array(100_000).fill(0x91))
  })

  it('random and mutated bytes: either a batch or KinfError, never anything else', () => {
    let state = 0x2545f491
    const random = () => {
      // xorshift32: deterministic, so a failure reproduces.
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      return (state >>> 0) / 2 ** 32
    }
    const seeds = [unhex(docExample.legacy), unhex(docExample.map)]
    for (let round = 0; round < 3_000; round++) {
      let bytes: Uint8Array
      if (round % 2 === 0) {
        bytes = Uint8Array.from({ length: Math.floor(random() * 64) }, () => random() * 256)
      } else {
        bytes = Uint8Array.from(seeds[round % 4 === 1 ? 0 : 1] as Uint8Array)
        for (let flips = 1 + Math.floor(random() * 4); flips > 0; flips--) {
          bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256)
        }
      }
      try {
        decodeEventBatch(bytes)
      } catch (error) {
        if (!KinfError.isInstance(error)) throw error
      }
    }
  })
})
