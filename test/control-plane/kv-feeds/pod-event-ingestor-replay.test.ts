import { afterEach, describe, expect, it } from 'vitest'
import {
  createKvEventPublisher,
  type KvEventPublisher,
} from '../../../control-plane/kv-events/create-kv-event-publisher.ts'
import type { KvCacheEvent } from '../../../control-plane/kv-events/kv-cache-event.ts'
import { PodEventIngestor } from '../../../control-plane/kv-feeds/pod-event-ingestor.ts'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { blockStored } from '../../support/kv-feeds/block-stored.ts'
import { ingestorOptions } from '../../support/kv-feeds/ingestor-options.ts'

// vLLM's replay reply is ['', topic, seq, payload] since PR #45177 and ['', seq, payload]
// before (docs/vllm-wire.md §1.3); the simulator's publisher speaks either. The ingestor
// must rebuild a pod's index from both, over real ZMQ sockets.

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const tokens = Array.from({ length: 48 }, (_, i) => 40 + i)
const stored = (block: number): KvCacheEvent[] => [
  blockStored([BigInt(block + 1)], tokens.slice(16 * block, 16 * (block + 1)), {
    parentBlockHash: block === 0 ? null : BigInt(block),
  }),
]

describe('PodEventIngestor replaying a pod’s history', () => {
  it.each(['topic', 'legacy'] as const)(
    'rebuilds the index from replies framed the %s way, and repairs a gap',
    async (replayFraming) => {
      const pub: KvEventPublisher = await createKvEventPublisher({
        endpoint: 'tcp://127.0.0.1:*',
        replayEndpoint: 'tcp://127.0.0.1:*',
        topic: 'kv@pod-a@m',
        encoding: 'map',
        replayFraming,
      })
      cleanups.push(() => pub.close())
      // History the ingestor never saw live: only the replay socket has it.
      pub.publish(stored(0), 1, { send: false })
      pub.publish(stored(1), 2, { send: false })
      const index = createMemoryKvIndex()
      const errors: string[] = []
      const ingestor = new PodEventIngestor(
        ingestorOptions({
          model: 'm',
          index,
          replayEndpoint: pub.replayEndpoint as string,
          onError: (message) => errors.push(message),
        }),
      )
      cleanups.push(() => ingestor.close())
      await ingestor.start()
      const chain = computeBlockKeys(tokens, 16, { model: 'm' })
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([2])
      expect(ingestor.appliedSeq).toBe(1n)
      // Seq 2 is lost on the way; seq 3 arrives live and the gap is replayed.
      pub.publish(stored(2), 3, { send: false })
      const late = pub.publish([{ type: 'BlockRemoved', blockHashes: [1n], medium: 'GPU' }], 4, {
        send: false,
      })
      await ingestor.receive(late, {
        ts: 4,
        events: [{ type: 'BlockRemoved', blockHashes: [1n], medium: 'GPU' }],
        dataParallelRank: 0,
      })
      expect(ingestor.counters).toMatchObject({ gaps: 1, unrepairable: 0, applyErrors: 0 })
      expect(ingestor.appliedSeq).toBe(3n)
      // Block 0 went with seq 3; block 2 came with the replayed seq 2.
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
      expect(await index.lookup(chain.subarray(2), ['pod-a'], 0)).toEqual([2])
      expect(await index.storedBlocks(['pod-a'])).toEqual([2])
      expect(errors).toEqual([])
    },
  )
})
