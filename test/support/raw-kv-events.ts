import { decode } from '@msgpack/msgpack'
import { Subscriber } from 'zeromq'
import type { KvEventPublisher } from '../../control-plane/kv-events/create-kv-event-publisher.ts'
import type { PublishedEvent } from '../../control-plane/kv-events/vllm-event-structs.ts'
import { createSignal, sendUntilReceived } from '../control-plane/kv-events/collect-batches.ts'

/** A KV-event batch read with a plain msgpack decoder, no project code: `[ts, events, rank]`. */
export function rawBatch(payload: Uint8Array): unknown[] {
  return decode(payload, { useBigInt64: true }) as unknown[]
}

/** The events of a raw batch. */
export const rawEvents = (payload: Uint8Array): unknown[] => rawBatch(payload)[1] as unknown[]

/**
 * The raw frames of every message a publisher sends after this is called, read by a bare
 * ZMQ SUB socket; `publishAll` sends batches and waits until the last has arrived.
 */
export async function rawFramesOf(publisher: KvEventPublisher) {
  const messages: Buffer[][] = []
  const signal = createSignal()
  const sub = new Subscriber({ linger: 0 })
  sub.connect(publisher.endpoint)
  sub.subscribe('')
  void (async () => {
    for await (const frames of sub) {
      messages.push(frames)
      signal.notify()
    }
  })().catch(() => {})
  // The slow joiner: empty probe batches until one arrives.
  await sendUntilReceived(
    () => publisher.publish([], 0),
    () => messages.length > 0,
    signal.until,
  )
  return {
    close: () => sub.close(),
    /** Publishes the batches; resolves with each one's [topic, seq, payload] as received. */
    async publishAll(batches: readonly PublishedEvent[][]): Promise<Buffer[][]> {
      const seqs = batches.map((events, i) => publisher.publish(events, 1_700_000_000 + i))
      const last = seqs.at(-1)
      const arrived = () => messages.some((m) => m[1]?.readBigUInt64BE() === last)
      if (!(await signal.until(arrived))) throw new Error('the batches did not arrive')
      return seqs.map((seq) => messages.find((m) => m[1]?.readBigUInt64BE() === seq) as Buffer[])
    },
  }
}
