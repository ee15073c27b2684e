import { encode } from '@msgpack/msgpack'
import { describe, expect, it } from 'vitest'
import { Router } from 'zeromq'
import { replayEndSeq, seqFrame } from '../../../control-plane/kv-events/seq-frame.ts'
import { PodEventIngestor } from '../../../control-plane/kv-feeds/pod-event-ingestor.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { blockStored, eventBatch } from '../../support/kv-feeds/block-stored.ts'
import { ingestorOptions } from '../../support/kv-feeds/ingestor-options.ts'

describe('PodEventIngestor options', () => {
  it('starts cold and ready without a replay endpoint', async () => {
    const ready: boolean[] = []
    const ingestor = new PodEventIngestor(
      ingestorOptions({ onReady: (value) => ready.push(value) }),
    )
    await ingestor.start()
    expect(ready).toEqual([false, true])
    expect(ingestor.counters.replays).toBe(0)
  })

  it.each([
    [{ replayTimeoutMs: 0 }, /^pod event ingestor: replayTimeoutMs /],
    [{ replayTimeoutMs: 1.5 }, /^pod event ingestor: replayTimeoutMs /],
    [{ replayTimeoutMs: 2 ** 31 }, /^pod event ingestor: replayTimeoutMs /],
    [{ onError: undefined as never }, /^pod event ingestor: onError /],
  ])('refuses %o when created', (bad, message) => {
    expect(() => new PodEventIngestor(ingestorOptions(bad))).toThrow(
      expect.objectContaining({ code: 'invalid_config', message: expect.stringMatching(message) }),
    )
  })
})

describe('PodEventIngestor when its pod stops answering', () => {
  const stored = (first: bigint) =>
    eventBatch(
      blockStored(
        [first, first + 1n],
        Array.from({ length: 32 }, (_, i) => i),
      ),
    )

  it('drops its entries, ignores batches until restarted, then starts over', async () => {
    const index = createMemoryKvIndex()
    const ready: boolean[] = []
    const ingestor = new PodEventIngestor(
      ingestorOptions({ index, onReady: (value) => ready.push(value) }),
    )
    await ingestor.start()
    await ingestor.receive(0n, stored(10n))
    expect(await index.storedBlocks(['pod-a'])).toEqual([2])

    await ingestor.suspend()
    expect(await index.storedBlocks(['pod-a'])).toEqual([0])
    expect(ready.at(-1)).toBe(false)
    // A late batch of the dead process does not bring its blocks back.
    await ingestor.receive(1n, stored(20n))
    expect(await index.storedBlocks(['pod-a'])).toEqual([0])
    expect(ingestor.appliedSeq).toBe(null)

    // The new process numbers its batches from 0 again.
    await ingestor.restart()
    expect(ready.at(-1)).toBe(true)
    await ingestor.receive(0n, stored(30n))
    expect(await index.storedBlocks(['pod-a'])).toEqual([2])
    expect(ingestor.appliedSeq).toBe(0n)
    expect(ingestor.counters.restarts).toBe(1)
  })
})

describe('PodEventIngestor replaying a batch with an event it cannot read', () => {
  it('applies the rest of the batch and counts the event, where the whole pod was dropped', async () => {
    // vLLM's replay ROUTER (`vllm/distributed/kv_events.py`, _service_replay): one reply
    // [identity, '', seq, payload] per buffered batch, then the end marker.
    const router = new Router({ linger: 0 })
    await router.bind('tcp://127.0.0.1:*')
    const tokens = Array.from({ length: 32 }, (_, i) => i + 1)
    const payload = encode(
      [
        1.5,
        [
          ['BlockStored', [1n, 2n], null, tokens, 16, null, 'GPU', null],
          ['BlockStored', [2n], null, [], 0, null, 'CPU', null],
          ['BlockStored', [3n], 2n, tokens.slice(0, 16), 'sixteen', null, 'GPU', null],
        ],
        0,
      ],
      { useBigInt64: true },
    )
    void (async () => {
      for await (const [identity] of router) {
        await router.send([identity as Buffer, '', seqFrame(0n), payload])
        await router.send([identity as Buffer, '', seqFrame(replayEndSeq), ''])
      }
    })()
    const index = createMemoryKvIndex()
    const errors: string[] = []
    const ingestor = new PodEventIngestor(
      ingestorOptions({
        index,
        replayEndpoint: router.lastEndpoint as string,
        onError: (message) => errors.push(message),
      }),
    )
    try {
      await ingestor.start()
      expect(await index.storedBlocks(['pod-a'])).toEqual([2])
      expect(ingestor.appliedSeq).toBe(0n)
      expect(ingestor.counters).toMatchObject({
        batches: 1,
        unrepairable: 0,
        applyErrors: 0,
        skipped: { invalid_block_size: 1 },
      })
      expect(errors).toEqual([
        'pod-a: skipped an event of batch 0: kv-events: events[2].blockSize: Invalid input',
      ])
    } finally {
      ingestor.close()
      router.close()
    }
  })
})
