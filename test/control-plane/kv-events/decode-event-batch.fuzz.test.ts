import { encode } from '@msgpack/msgpack'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeEventBatch } from '../../../control-plane/kv-events/decode-event-batch.ts'
import type { EventBatch } from '../../../control-plane/kv-events/kv-cache-event.ts'
import { toPodEvents } from '../../../control-plane/kv-events/to-pod-events.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../support/fuzz-runs.ts'
import { mutatedBytes } from '../../support/mutated-bytes.ts'

const runs = 3_000

/** Decoded (and indexable), or refused with a KinfError invalid_request: never a raw error. */
function decodedOrRefused(bytes: Uint8Array): EventBatch | null {
  try {
    const batch = decodeEventBatch(bytes)
    toPodEvents(batch.events)
    return batch
  } catch (error) {
    expect(KinfError.isInstance(error), String(error)).toBe(true)
    expect((error as KinfError).code).toBe('invalid_request')
    expect((error as KinfError).message).toMatch(/^kv-events: /)
    return null
  }
}

const hash = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  fc.bigInt({ min: -(1n << 63n), max: -1n }),
  fc.integer({ min: 0, max: 2 ** 31 }),
  fc.uint8Array({ minLength: 1, maxLength: 32 }),
)
const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof(arbitrary, fc.constant(null))
/** An event as vLLM writes it: `wire` field names in order, the tag first. */
const event = fc.oneof(
  fc
    .record({
      block_hashes: fc.array(hash, { maxLength: 4 }),
      parent_block_hash: nullable(hash),
      token_ids: fc.array(fc.nat(200_000), { maxLength: 64 }),
      block_size: fc.integer({ min: 1, max: 64 }),
      lora_id: nullable(fc.nat()),
      medium: nullable(fc.constantFrom('GPU', 'CPU', 'disk')),
      lora_name: nullable(fc.string({ maxLength: 8 })),
      extra_keys: nullable(
        fc.array(nullable(fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.nat()))), {
          maxLength: 4,
        }),
      ),
    })
    .map((fields) => ({ type: 'BlockStored', ...fields })),
  fc
    .record({
      block_hashes: fc.array(hash, { maxLength: 4 }),
      medium: nullable(fc.constant('GPU')),
    })
    .map((fields) => ({ type: 'BlockRemoved', ...fields })),
  fc.constant({ type: 'AllBlocksCleared' }),
)
const asArray = (wire: Record<string, unknown>) => Object.values(wire)
/** A valid batch in either encoding (docs/vllm-wire.md §1.4), written by @msgpack/msgpack. */
const validFrame = fc
  .record({
    ts: fc.double({ min: 0, max: 2e9, noNaN: true }),
    events: fc.array(event, { maxLength: 4 }),
    rank: nullable(fc.nat(8)),
    map: fc.boolean(),
  })
  .map(({ ts, events, rank, map }) =>
    encode(
      map ? { ts, events, data_parallel_rank: rank } : [ts, events.map((e) => asArray(e)), rank],
      { useBigInt64: true, forceFloat32: false },
    ),
  )

describe('fuzz: msgpack KV-event frames', () => {
  it(
    'decodes every valid frame, in both encodings',
    () => {
      fc.assert(
        fc.property(validFrame, (bytes) => {
          expect(decodedOrRefused(bytes)).not.toBeNull()
        }),
        fuzzParameters(runs, 15_041),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'decodes or refuses valid frames cut short, flipped, spliced',
    () => {
      fc.assert(
        fc.property(mutatedBytes(validFrame), (bytes) => {
          decodedOrRefused(bytes)
        }),
        fuzzParameters(runs, 15_042),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'decodes or refuses arbitrary bytes and hostile length headers',
    () => {
      const header = fc.constantFrom(
        [0xdd, 0xff, 0xff, 0xff, 0xff],
        [0xdf, 0xff, 0xff, 0xff, 0xff],
        [0xdb, 0xff, 0xff, 0xff, 0xff],
        [0xc6, 0xff, 0xff, 0xff, 0xff],
        [0xc9, 0xff, 0xff, 0xff, 0xff, 0x01],
        [0x92, 0xcb],
        [0xd6, 0xff],
        [],
      )
      const bytes = fc
        .tuple(header, fc.uint8Array({ maxLength: 64 }))
        .map(([head, tail]) => new Uint8Array([...head, ...tail]))
      fc.assert(
        fc.property(bytes, (frame) => {
          decodedOrRefused(frame)
        }),
        fuzzParameters(runs, 15_043),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'decodes or refuses any msgpack value as a batch',
    () => {
      const value = fc.anything({
        maxDepth: 4,
        withBigInt: true,
        withTypedArray: true,
        withNullPrototype: true,
      })
      fc.assert(
        fc.property(value, (v) => {
          let bytes: Uint8Array
          try {
            bytes = encode(v, { useBigInt64: true, ignoreUndefined: true })
          } catch {
            return // not encodable (a symbol, a bigint past 64 bits): nothing to decode
          }
          decodedOrRefused(bytes)
        }),
        fuzzParameters(runs, 15_044),
      )
    },
    fuzzTimeoutMs(runs),
  )
})
