import { encode } from '@msgpack/msgpack'
import { afterEach, describe, expect, it } from 'vitest'
import { Publisher } from 'zeromq'
import { createKvEventSubscriber } from '../../../control-plane/kv-events/create-kv-event-subscriber.ts'
import { encodeEventBatch } from '../../../control-plane/kv-events/encode-event-batch.ts'
import type {
  DecodedEventBatch,
  EventBatch,
} from '../../../control-plane/kv-events/kv-cache-event.ts'
import { seqFrame } from '../../../control-plane/kv-events/seq-frame.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { collectBatches, createSignal, sendUntilReceived } from './collect-batches.ts'
import { docBatch, docExample, unhex } from './wire-example.ts'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A raw PUB, so the test controls every frame. */
async function rawPublisher() {
  const pub = new Publisher({ linger: 0 })
  cleanups.push(() => pub.close())
  await pub.bind('tcp://127.0.0.1:*')
  return { pub, endpoint: pub.lastEndpoint as string }
}

function collect(endpoint: string, topicPrefix?: string) {
  const collector = collectBatches(endpoint, topicPrefix)
  cleanups.push(() => collector.subscriber.close())
  return collector
}

const batchAt = (ts: number): EventBatch => ({ ts, events: [], dataParallelRank: null })
const good = (topic: string, seq: bigint, ts = Number(seq)) => [
  topic,
  seqFrame(seq),
  encodeEventBatch(batchAt(ts), 'map'),
]

describe('createKvEventSubscriber', () => {
  it('delivers topic, seq and the decoded batch of vLLM messages', async () => {
    const { pub, endpoint } = await rawPublisher()
    const collector = collect(endpoint)
    await sendUntilReceived(
      () => void pub.send(['kv-events', unhex(docExample.seq0), unhex(docExample.legacy)]),
      () => collector.received.length > 0,
      collector.until,
    )
    expect(collector.received[0]).toEqual({ topic: 'kv-events', seq: 0n, batch: docBatch })
  })

  it('reports malformed messages through onError and keeps receiving', async () => {
    const { pub, endpoint } = await rawPublisher()
    const collector = collect(endpoint)
    await sendUntilReceived(
      () => void pub.send(good('pod', 0n)),
      () => collector.received.length > 0,
      collector.until,
    )
    await pub.send(['pod', seqFrame(1n)]) // 2 frames
    await pub.send(['pod', seqFrame(1n), encodeEventBatch(batchAt(1), 'map'), 'x']) // 4 frames
    await pub.send(['pod', unhex('0001'), encodeEventBatch(batchAt(1), 'map')]) // 2-byte seq
    await pub.send(['pod', seqFrame(2n), unhex('93cb')]) // truncated payload
    await pub.send(['pod', seqFrame(3n), unhex('dfffffffff')]) // a 4-billion-entry map claim
    await pub.send(good('pod', 4n))
    expect(await collector.until(() => collector.received.at(-1)?.seq === 4n)).toBe(true)
    expect(collector.errors.map((error) => [error.code, error.message])).toEqual([
      ['invalid_request', 'kv-events: expected 3 frames, got 2'],
      ['invalid_request', 'kv-events: expected 3 frames, got 4'],
      ['invalid_request', 'kv-events: pod: seq frame of 2 bytes'],
      ['invalid_request', expect.stringMatching(/not msgpack.*\(pod seq 2\)$/)],
      ['invalid_request', expect.stringMatching(/map length.*\(pod seq 3\)$/)],
    ])
    expect(collector.errors.every((error) => KinfError.isInstance(error))).toBe(true)
  })

  it('delivers a batch with one unreadable event, the event left out and named', async () => {
    const { pub, endpoint } = await rawPublisher()
    const collector = collect(endpoint)
    // As vLLM sends a step with the OffloadingConnector on: a GPU store and the CPU tier's
    // placeholder (block_size 0), here beside an event whose block_hashes is garbage.
    const payload = encode(
      [
        1.5,
        [
          ['BlockStored', [11n], null, [1, 2], 2, null, 'GPU', null],
          { type: 'BlockStored', block_hashes: [11n], parent_block_hash: null, token_ids: [] },
          ['BlockStored', [11n], null, [], 0, null, 'CPU', null],
          ['BlockRemoved', 'not a list', 'GPU'],
        ],
        0,
      ],
      { useBigInt64: true },
    )
    await sendUntilReceived(
      () => void pub.send(['pod', seqFrame(0n), payload]),
      () => collector.received.length > 0,
      collector.until,
    )
    const { batch } = collector.received[0] as { batch: DecodedEventBatch }
    expect(
      batch.events.map((event) => [
        event.type,
        event.type === 'AllBlocksCleared' ? null : event.medium,
      ]),
    ).toEqual([
      ['BlockStored', 'GPU'],
      ['BlockStored', 'CPU'],
    ])
    expect(batch.skipped?.map(({ index, reason }) => [index, reason])).toEqual([
      [1, 'invalid_block_size'],
      [3, 'invalid_block_hashes'],
    ])
    expect(collector.errors).toEqual([])
  })

  it('survives an onBatch that throws, reporting it as internal', async () => {
    const { pub, endpoint } = await rawPublisher()
    const errors: KinfError[] = []
    const seen: bigint[] = []
    const signal = createSignal()
    const subscriber = createKvEventSubscriber({
      endpoint,
      onBatch(_topic, seq) {
        seen.push(seq)
        signal.notify()
        if (seq % 2n === 0n) throw new Error('consumer bug')
      },
      onError(error) {
        errors.push(error)
        throw new Error('and a throwing error handler')
      },
    })
    cleanups.push(() => subscriber.close())
    let seq = 0n
    await sendUntilReceived(
      () => void pub.send(good('pod', seq++)),
      () => seen.length > 0,
      signal.until,
    )
    const first = seen[0] as bigint
    for (let i = 0; i < 3; i++) await pub.send(good('pod', seq++))
    expect(await signal.until(() => seen.at(-1) === seq - 1n)).toBe(true)
    expect(seen).toEqual([first, first + 1n, first + 2n, first + 3n])
    expect(errors).toHaveLength(2)
    expect(errors.every((error) => error.code === 'internal')).toBe(true)
  })

  it('filters by topic prefix and follows several publishers', async () => {
    const a = await rawPublisher()
    const b = await rawPublisher()
    const collector = collect(a.endpoint, 'kv@')
    collector.subscriber.connect(b.endpoint)
    const fromA = () => collector.received.some((r) => r.topic === 'kv@a')
    const fromB = () => collector.received.some((r) => r.topic === 'kv@b')
    await sendUntilReceived(() => void a.pub.send(good('kv@a', 0n)), fromA, collector.until)
    await sendUntilReceived(() => void b.pub.send(good('kv@b', 0n)), fromB, collector.until)
    await a.pub.send(good('other', 1n))
    await a.pub.send(good('kv@a', 9n))
    expect(await collector.until(() => collector.received.at(-1)?.seq === 9n)).toBe(true)
    expect(collector.received.every((r) => r.topic.startsWith('kv@'))).toBe(true)
    expect(collector.errors).toEqual([])
  })

  it('refuses an endpoint ZMQ cannot parse', () => {
    expect(() =>
      createKvEventSubscriber({ endpoint: 'nonsense', onBatch() {}, onError() {} }),
    ).toThrow(KinfError)
  })

  it('refuses socket options libzmq would refuse, before any socket exists', () => {
    const base = { endpoint: 'tcp://127.0.0.1:1', onBatch() {}, onError() {} }
    expect(() => createKvEventSubscriber({ ...base, hwm: -1 })).toThrow(
      expect.objectContaining({ code: 'invalid_config', message: expect.stringMatching(/hwm/) }),
    )
    expect(() => createKvEventSubscriber({ ...base, maxMessageBytes: 0 })).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: expect.stringMatching(/maxMessageBytes/),
      }),
    )
  })
})
