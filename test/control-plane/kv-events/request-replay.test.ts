import { afterEach, describe, expect, it } from 'vitest'
import { Router } from 'zeromq'
import { encodeEventBatch } from '../../../control-plane/kv-events/encode-event-batch.ts'
import { requestReplay } from '../../../control-plane/kv-events/request-replay.ts'
import { replayEndSeq, seqFrame } from '../../../control-plane/kv-events/seq-frame.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const batchAt = (ts: number) => ({ ts, events: [], dataParallelRank: 0 })
const payload = (ts: number) => encodeEventBatch(batchAt(ts), 'array')
const end = seqFrame(replayEndSeq)

/** A fake replay server that answers each request with `reply(identity, startSeq)`'s messages. */
async function fakeServer(reply: (startSeq: bigint) => (string | Uint8Array)[][]) {
  const router = new Router({ linger: 0 })
  cleanups.push(() => router.close())
  await router.bind('tcp://127.0.0.1:*')
  void (async () => {
    for await (const [identity, , start] of router) {
      const startSeq = Buffer.from(start as Buffer).readBigUInt64BE()
      for (const frames of reply(startSeq)) await router.send([identity as Buffer, ...frames])
    }
  })()
  return router.lastEndpoint as string
}

async function rejection(promise: Promise<unknown>): Promise<KinfError> {
  const error = await promise.then(
    () => new Error('resolved'),
    (reason: unknown) => reason,
  )
  if (!KinfError.isInstance(error)) throw error
  return error
}

describe('requestReplay', () => {
  it('sends [delimiter, start seq] and reads vLLM replies until the end marker', async () => {
    const endpoint = await fakeServer((start) => [
      ['', seqFrame(start), payload(1)],
      ['', seqFrame(start + 1n), payload(2)],
      ['', end, ''],
    ])
    expect(await requestReplay({ endpoint, startSeq: 0xffff_ffff_ffff_fff0n })).toEqual([
      { seq: 0xffff_ffff_ffff_fff0n, batch: batchAt(1) },
      { seq: 0xffff_ffff_ffff_fff1n, batch: batchAt(2) },
    ])
  })

  it("reads llm-d-inference-sim's replies, which carry a topic frame", async () => {
    const endpoint = await fakeServer((start) => [
      ['', 'kv@pod@model', seqFrame(start), payload(1)],
      ['', '', end, ''],
    ])
    expect(await requestReplay({ endpoint, startSeq: 7n })).toEqual([
      { seq: 7n, batch: batchAt(1) },
    ])
  })

  it('rejects as upstream_unavailable when nothing answers', async () => {
    const silent = await fakeServer(() => [])
    const error = await rejection(requestReplay({ endpoint: silent, startSeq: 0n, timeoutMs: 200 }))
    expect(error.code).toBe('upstream_unavailable')
    expect(error.isRetryable).toBe(true)
  })

  it('rejects as upstream_unavailable when the end marker never comes', async () => {
    const endpoint = await fakeServer(() => [['', seqFrame(0n), payload(1)]])
    const error = await rejection(requestReplay({ endpoint, startSeq: 0n, timeoutMs: 200 }))
    expect(error.code).toBe('upstream_unavailable')
    expect(error.message).toMatch(/1 batches without the end marker/)
  })

  it.each([
    ['a reply of one frame', [['', seqFrame(0n)]], /malformed replay reply/],
    ['a 4-byte seq', [['', 'abcd', payload(1)]], /malformed replay reply/],
    ['a payload that is not a batch', [['', seqFrame(4n), 'garbage']], /seq 4\)$/],
  ])('rejects %s as invalid_request', async (_name, replies, message) => {
    const endpoint = await fakeServer(() => [...replies, ['', end, '']])
    const error = await rejection(requestReplay({ endpoint, startSeq: 0n }))
    expect(error.code).toBe('invalid_request')
    expect(error.message).toMatch(message)
  })

  it('refuses a replay longer than maxBatches', async () => {
    const endpoint = await fakeServer(() => [
      ['', seqFrame(0n), payload(0)],
      ['', seqFrame(1n), payload(1)],
      ['', end, ''],
    ])
    const error = await rejection(requestReplay({ endpoint, startSeq: 0n, maxBatches: 1 }))
    expect(error.message).toMatch(/exceeds 1 batches/)
  })

  it('refuses a start seq outside uint64 and an endpoint ZMQ cannot parse', async () => {
    expect(
      (await rejection(requestReplay({ endpoint: 'tcp://127.0.0.1:1', startSeq: -1n }))).code,
    ).toBe('invalid_request')
    expect((await rejection(requestReplay({ endpoint: 'nonsense', startSeq: 0n }))).code).toBe(
      'invalid_config',
    )
    const badTimeout = requestReplay({ endpoint: 'tcp://127.0.0.1:1', startSeq: 0n, timeoutMs: -1 })
    expect(await rejection(badTimeout)).toMatchObject({
      code: 'invalid_config',
      message: expect.stringMatching(/^kv-events: timeoutMs /),
    })
    const badLimit = requestReplay({ endpoint: 'tcp://127.0.0.1:1', startSeq: 0n, maxBatches: 0 })
    expect(await rejection(badLimit)).toMatchObject({
      code: 'invalid_config',
      message: expect.stringMatching(/^kv-events: maxBatches /),
    })
  })
})
