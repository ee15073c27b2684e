import { afterEach, describe, expect, it } from 'vitest'
import { Dealer, Subscriber } from 'zeromq'
import {
  createKvEventPublisher,
  type KvEventPublisher,
  type KvEventPublisherOptionsInput,
} from '../../../control-plane/kv-events/create-kv-event-publisher.ts'
import { encodeEventBatch } from '../../../control-plane/kv-events/encode-event-batch.ts'
import type { KvCacheEvent } from '../../../control-plane/kv-events/kv-cache-event.ts'
import { requestReplay } from '../../../control-plane/kv-events/request-replay.ts'
import type { KinfError } from '../../../shared/errors/kinf-error.ts'
import { collectBatches, createSignal, sendUntilReceived } from './collect-batches.ts'
import { docBatch, docExample, hex } from './wire-example.ts'

// Ephemeral ports: bind to `*` and read the real address back (lastEndpoint).
const anyPort = 'tcp://127.0.0.1:*'
const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function publisher(options: Partial<KvEventPublisherOptionsInput> = {}) {
  const pub = await createKvEventPublisher({
    endpoint: anyPort,
    replayEndpoint: anyPort,
    topic: 'kv-events',
    encoding: 'map',
    ...options,
  })
  cleanups.push(() => pub.close())
  return pub
}

function collect(endpoint: string, topicPrefix?: string) {
  const collector = collectBatches(endpoint, topicPrefix)
  cleanups.push(() => collector.subscriber.close())
  return collector
}

/** A distinct batch per seq, so what arrives can be matched to what was sent. */
const eventsFor = (n: number): KvCacheEvent[] => [
  {
    type: 'BlockStored',
    blockHashes: [BigInt.asUintN(64, 0xffff_ffff_ffff_ff00n + BigInt(n))],
    parentBlockHash: n === 0 ? null : 0x8000_0000_0000_0000n + BigInt(n),
    tokenIds: [n, n + 1],
    blockSize: 2,
    loraId: null,
    medium: 'GPU',
    loraName: null,
  },
  { type: 'BlockRemoved', blockHashes: [BigInt(n)], medium: 'GPU' },
  { type: 'AllBlocksCleared' },
]
const publishNth = (pub: KvEventPublisher, n: number) => pub.publish(eventsFor(n), 1000 + n)
const expectedBatch = (n: number) => ({ ts: 1000 + n, events: eventsFor(n), dataParallelRank: 0 })

describe('createKvEventPublisher', () => {
  it('numbers batches from 0, +1 each, and puts the §1.6 bytes in seq 0', async () => {
    const pub = await publisher({ encoding: 'array' })
    expect(pub.seq).toBe(0n)
    expect(pub.publish(docBatch.events, docBatch.ts)).toBe(0n)
    expect(pub.publish([], 1)).toBe(1n)
    expect(pub.publish([], 2)).toBe(2n)
    expect(pub.seq).toBe(3n)
    // The replay socket hands the buffered frames back as they were sent.
    const dealer = new Dealer({ linger: 0 })
    cleanups.push(() => dealer.close())
    dealer.connect(pub.replayEndpoint as string)
    await dealer.send(['', Buffer.from('0000000000000000', 'hex')])
    const [, topic, seqFrame, payload] = await dealer.receive()
    expect(hex(topic as Buffer)).toBe(docExample.topic)
    expect(hex(seqFrame as Buffer)).toBe(docExample.seq0)
    expect(hex(payload as Buffer)).toBe(docExample.legacy)
  })

  it.each([
    ['topic', [docExample.topic], ['', '']],
    ['legacy', [], ['']],
  ] as const)(
    'frames replay replies the %s way (vLLM PR #45177 added the topic)',
    async (replayFraming, head, endHead) => {
      const pub = await publisher({ replayFraming })
      for (let n = 0; n < 3; n++) publishNth(pub, n)
      const dealer = new Dealer({ linger: 0 })
      cleanups.push(() => dealer.close())
      dealer.connect(pub.replayEndpoint as string)
      await dealer.send(['', Buffer.alloc(8)])
      const reply = await dealer.receive()
      expect(reply.map((frame) => hex(frame))).toEqual([
        '',
        ...head,
        '0000000000000000',
        hex(encodeEventBatch(expectedBatch(0), 'map')),
      ])
      await dealer.receive()
      await dealer.receive()
      const end = await dealer.receive()
      expect(end.map((frame) => hex(frame))).toEqual([...endHead, 'ffffffffffffffff', ''])
      // The router's client reads both, whole batches from any start.
      const replayed = await requestReplay({ endpoint: pub.replayEndpoint as string, startSeq: 1n })
      expect(replayed).toEqual([1, 2].map((n) => ({ seq: BigInt(n), batch: expectedBatch(n) })))
    },
  )

  it.each(['map', 'array'] as const)(
    'sends exactly [topic, seq, payload] frames (%s encoding)',
    async (encoding) => {
      const pub = await publisher({ encoding })
      const sub = new Subscriber({ linger: 0 })
      cleanups.push(() => sub.close())
      sub.connect(pub.endpoint)
      sub.subscribe('kv-')
      const messages: Buffer[][] = []
      const signal = createSignal()
      void (async () => {
        for await (const frames of sub) {
          messages.push(frames)
          signal.notify()
        }
      })()
      const probes = await sendUntilReceived(
        () => publishNth(pub, Number(pub.seq)),
        () => messages.length > 0,
        signal.until,
      )
      for (let i = 0; i < 3; i++) publishNth(pub, probes + i)
      expect(
        await signal.until(() => messages.at(-1)?.[1]?.readBigUInt64BE() === pub.seq - 1n),
      ).toBe(true)
      const first = (messages[0] as Buffer[])[1]?.readBigUInt64BE() ?? -1n
      messages.forEach((frames, i) => {
        const seq = first + BigInt(i)
        expect(frames).toHaveLength(3)
        expect(hex(frames[0] as Buffer)).toBe(docExample.topic)
        expect(hex(frames[1] as Buffer)).toBe(seq.toString(16).padStart(16, '0'))
        expect(hex(frames[2] as Buffer)).toBe(
          hex(encodeEventBatch(expectedBatch(Number(seq)), encoding)),
        )
      })
    },
  )

  it('round-trips batches to createKvEventSubscriber with consecutive seqs', async () => {
    const pub = await publisher()
    const collector = collect(pub.endpoint, 'kv-events')
    const probes = await sendUntilReceived(
      () => publishNth(pub, Number(pub.seq)),
      () => collector.received.length > 0,
      collector.until,
    )
    for (let i = 0; i < 5; i++) publishNth(pub, probes + i)
    expect(await collector.until(() => collector.received.at(-1)?.seq === pub.seq - 1n)).toBe(true)
    const first = collector.received[0]?.seq ?? -1n
    expect(collector.received).toEqual(
      collector.received.map((_, i) => ({
        topic: 'kv-events',
        seq: first + BigInt(i),
        batch: expectedBatch(Number(first) + i),
      })),
    )
    expect(collector.errors).toEqual([])
  })

  it('replays buffered batches from a start seq, then the end marker', async () => {
    const pub = await publisher()
    for (let n = 0; n < 5; n++) publishNth(pub, n)
    const replayEndpoint = pub.replayEndpoint as string
    const all = await requestReplay({ endpoint: replayEndpoint, startSeq: 0n })
    expect(all).toEqual([0, 1, 2, 3, 4].map((n) => ({ seq: BigInt(n), batch: expectedBatch(n) })))
    const tail = await requestReplay({ endpoint: replayEndpoint, startSeq: 3n })
    expect(tail.map((entry) => entry.seq)).toEqual([3n, 4n])
    expect(await requestReplay({ endpoint: replayEndpoint, startSeq: 5n })).toEqual([])
  })

  it('withholds a batch sent with send: false, leaving a gap a replay fills', async () => {
    const pub = await publisher()
    const collector = collect(pub.endpoint, 'kv-events')
    const probes = await sendUntilReceived(
      () => publishNth(pub, Number(pub.seq)),
      () => collector.received.length > 0,
      collector.until,
    )
    const lost = pub.publish(eventsFor(probes), 1000 + probes, { send: false })
    publishNth(pub, probes + 1)
    expect(await collector.until(() => collector.received.at(-1)?.seq === lost + 1n)).toBe(true)
    expect(collector.received.map((r) => r.seq)).not.toContain(lost)
    const replayed = await requestReplay({ endpoint: pub.replayEndpoint as string, startSeq: lost })
    expect(replayed[0]).toEqual({ seq: lost, batch: expectedBatch(probes) })
  })

  it('replays what is left when the start seq was evicted', async () => {
    const pub = await publisher({ bufferSteps: 3 })
    for (let n = 0; n < 6; n++) publishNth(pub, n)
    const replayed = await requestReplay({ endpoint: pub.replayEndpoint as string, startSeq: 1n })
    expect(replayed).toEqual([3, 4, 5].map((n) => ({ seq: BigInt(n), batch: expectedBatch(n) })))
  })

  it('starts again at seq 0 after a restart on the same ports', async () => {
    // vLLM binds only wildcard addresses (tcp://127.0.0.1:P would connect), so the restart
    // binds tcp://*:P; the replay socket always binds.
    const first = await createKvEventPublisher({
      endpoint: 'tcp://*:*',
      replayEndpoint: anyPort,
      topic: 'kv-events',
      encoding: 'map',
    })
    cleanups.push(() => first.close())
    const { endpoint, replayEndpoint } = first
    const port = new URL(endpoint).port
    const collector = collect(endpoint)
    await sendUntilReceived(
      () => publishNth(first, Number(first.seq)),
      () => collector.received.length > 0,
      collector.until,
    )
    // Far more batches than the restarted publisher can send before the subscriber reconnects.
    for (let n = 0; n < 1_000; n++) publishNth(first, Number(first.seq))
    expect(await collector.until(() => collector.received.at(-1)?.seq === first.seq - 1n)).toBe(
      true,
    )
    const lastBeforeRestart = first.seq - 1n
    await first.close()

    const second = await publisher({
      endpoint: `tcp://*:${port}`,
      replayEndpoint: replayEndpoint as string,
    })
    expect(second.endpoint).toBe(endpoint)
    const before = collector.received.length
    // The subscriber, still connected to the same address, reconnects by itself.
    await sendUntilReceived(
      () => second.publish([], -1 - Number(second.seq)),
      () => collector.received.length > before,
      collector.until,
    )
    const afterRestart = collector.received[before]
    expect(afterRestart?.batch.ts).toBeLessThan(0)
    expect(afterRestart?.seq).toBeLessThan(lastBeforeRestart)
    const replayed = await requestReplay({ endpoint: replayEndpoint as string, startSeq: 0n })
    expect(replayed[0]).toEqual({ seq: 0n, batch: { ts: -1, events: [], dataParallelRank: 0 } })
    expect(replayed.map((entry) => entry.seq)).toEqual(replayed.map((_, i) => BigInt(i)))
  })

  it('ignores malformed replay requests and keeps serving', async () => {
    const errors: KinfError[] = []
    const pub = await publisher({ onError: (error) => errors.push(error) })
    publishNth(pub, 0)
    const dealer = new Dealer({ linger: 0 })
    cleanups.push(() => dealer.close())
    dealer.connect(pub.replayEndpoint as string)
    const seq8 = Buffer.alloc(8)
    await dealer.send(seq8) // no delimiter: 2 frames at the ROUTER
    await dealer.send(['', 'abc']) // seq of 3 bytes
    await dealer.send(['', Buffer.alloc(9)]) // seq of 9 bytes
    await dealer.send(['', seq8, 'extra']) // 4 frames
    await dealer.send(['', '']) // empty seq
    await dealer.send(['', seq8]) // the one valid request
    const reply = await dealer.receive()
    expect(reply.map((frame) => hex(frame))).toEqual([
      '',
      docExample.topic,
      '0000000000000000',
      hex(encodeEventBatch(expectedBatch(0), 'map')),
    ])
    const end = await dealer.receive()
    expect(end.map((frame) => hex(frame))).toEqual(['', '', 'ffffffffffffffff', ''])

    // Oversized frames cost the sender its connection, not the publisher its replay service.
    const hostile = new Dealer({ linger: 0 })
    cleanups.push(() => hostile.close())
    hostile.connect(pub.replayEndpoint as string)
    await hostile.send(['', Buffer.alloc(1 << 20)])
    // A client that asks and vanishes before the reply.
    const vanishing = new Dealer({ linger: 0 })
    vanishing.connect(pub.replayEndpoint as string)
    await vanishing.send(['', seq8])
    vanishing.close()

    publishNth(pub, 1)
    const replayed = await requestReplay({ endpoint: pub.replayEndpoint as string, startSeq: 0n })
    expect(replayed.map((entry) => entry.seq)).toEqual([0n, 1n])
    expect(errors.every((error) => error.code === 'upstream_unavailable')).toBe(true)
  })

  it.each([
    { hwm: -1 },
    { hwm: 2 ** 31 },
    { replaySendTimeoutMs: 0 },
    { bufferSteps: 0 },
    { dataParallelRank: -1 },
    { endpoint: 'tcp://no-such-interface:*' },
  ])('refuses %o as invalid_config', async (options) => {
    await expect(publisher(options)).rejects.toMatchObject({ code: 'invalid_config' })
  })

  it('never waits on a subscriber that does not read, and abandons a replay client that does not', async () => {
    const errors: KinfError[] = []
    const signal = createSignal()
    const pub = await publisher({
      bufferSteps: 3_000,
      hwm: 10,
      replaySendTimeoutMs: 200,
      onError: (error) => {
        errors.push(error)
        signal.notify()
      },
    })
    const idle = new Subscriber({ linger: 0, receiveHighWaterMark: 1 })
    cleanups.push(() => idle.close())
    idle.connect(pub.endpoint)
    idle.subscribe('')
    const tokens = Array.from({ length: 4_000 }, (_, i) => i)
    const events: KvCacheEvent[] = [
      {
        type: 'BlockStored',
        blockHashes: [1n],
        parentBlockHash: null,
        tokenIds: tokens,
        blockSize: 4_000,
        loraId: null,
        medium: 'GPU',
        loraName: null,
      },
    ]
    // ~30 MB that nobody reads: publish returns every time (it is synchronous).
    for (let n = 0; n < 3_000; n++) pub.publish(events, n)
    expect(pub.seq).toBe(3_000n)

    // A small kernel buffer too, so ~30 MB of replies cannot all fit in flight.
    const stuck = new Dealer({ linger: 0, receiveHighWaterMark: 1, receiveBufferSize: 4096 })
    cleanups.push(() => stuck.close())
    stuck.connect(pub.replayEndpoint as string)
    await stuck.send(['', Buffer.alloc(8)])
    expect(await signal.until(() => errors.length > 0)).toBe(true)
    expect(errors[0]?.code).toBe('upstream_unavailable')

    const replayed = await requestReplay({
      endpoint: pub.replayEndpoint as string,
      startSeq: 2_998n,
    })
    expect(replayed.map((entry) => entry.seq)).toEqual([2_998n, 2_999n])
  })
})
