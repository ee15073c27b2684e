import { Subscriber } from 'zeromq'
import { z } from 'zod'
import { functionOption, parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { decodeEventBatch } from './decode-event-batch.ts'
import type { DecodedEventBatch } from './kv-cache-event.ts'
import { readSeqFrame } from './seq-frame.ts'
import { HighWaterMark, MessageBytes } from './socket-options.ts'

export const KvEventSubscriberOptions = z.strictObject({
  endpoint: z.string().describe("A pod's PUB address; more can be added with connect()"),
  topicPrefix: z
    .string()
    .default('')
    .describe('Only topics starting with this are received; all by default'),
  hwm: HighWaterMark.default(100_000).describe(
    'Per-publisher receive queue, in messages; beyond it ZMQ drops (the seq shows the gap)',
  ),
  maxMessageBytes: MessageBytes.default(64 * 1024 * 1024).describe(
    'Larger messages make ZMQ drop the connection (it reconnects)',
  ),
  onBatch: functionOption<
    (topic: string, seq: bigint, batch: DecodedEventBatch) => void
  >().describe(
    'Each batch, in arrival order, with the events it had to skip. It is called synchronously; throwing reports to onError',
  ),
  onError: functionOption<(error: KinfError) => void>().describe(
    'Messages that are not a batch (skipped whole) and onBatch failures; the subscriber carries on',
  ),
})
export type KvEventSubscriberOptions = z.infer<typeof KvEventSubscriberOptions>
export type KvEventSubscriberOptionsInput = z.input<typeof KvEventSubscriberOptions>

/** Checked before any socket exists (see socket-options.ts). */
function parseSubscriberOptions(input: KvEventSubscriberOptionsInput): KvEventSubscriberOptions {
  return parseOptions(KvEventSubscriberOptions, input, 'kv-events')
}

export interface KvEventSubscriber {
  connect(endpoint: string): void
  disconnect(endpoint: string): void
  close(): Promise<void>
}

const topicDecoder = new TextDecoder()

/**
 * A SUB socket on vLLM KV events. It only decodes and delivers: detecting gaps (seq >
 * last + 1), restarts (seq < last) and asking for replays is the caller's job. ZMQ
 * reconnects on its own, and a SUB misses whatever was published before its subscription
 * reached the publisher ("slow joiner"), so the first seq seen need not be 0.
 */
export function createKvEventSubscriber(options: KvEventSubscriberOptionsInput): KvEventSubscriber {
  return openSubscriber(options, (_sub, connect) => connect(options.endpoint))
}

/**
 * A SUB socket that binds `endpoint` for pods to connect to (vLLM's PUB connects when its
 * endpoint names a host, as llm-d deploys it): one socket for every pod, told apart by
 * topic. Resolves once bound; `endpoint` then holds the real address (port 0 or `*`).
 */
export async function bindKvEventSubscriber(
  options: KvEventSubscriberOptionsInput,
): Promise<KvEventSubscriber & { readonly endpoint: string }> {
  let bound = options.endpoint
  const subscriber = openSubscriber(options, async (sub) => {
    try {
      await sub.bind(options.endpoint)
      bound = sub.lastEndpoint ?? options.endpoint
    } catch (error) {
      throw new KinfError('invalid_config', `kv-events: cannot bind ${options.endpoint}`, {
        cause: error,
      })
    }
  })
  await subscriber.ready
  return {
    ...subscriber,
    get endpoint() {
      return bound
    },
  }
}

function openSubscriber(
  input: KvEventSubscriberOptionsInput,
  attach: (sub: Subscriber, connect: (endpoint: string) => void) => void | Promise<void>,
): KvEventSubscriber & { ready: Promise<void> } {
  const { topicPrefix, hwm, maxMessageBytes, onBatch, onError } = parseSubscriberOptions(input)
  const sub = new Subscriber({
    linger: 0,
    receiveHighWaterMark: hwm,
    maxMessageSize: maxMessageBytes,
  })
  const report = (error: KinfError) => {
    try {
      onError(error)
    } catch {
      // A throwing handler must not stop the receive loop.
    }
  }

  function receive(frames: Buffer[]): void {
    const [topicBytes, seqBytes, payload] = frames
    if (frames.length !== 3 || !topicBytes || !seqBytes || !payload) {
      report(new KinfError('invalid_request', `kv-events: expected 3 frames, got ${frames.length}`))
      return
    }
    const topic = topicDecoder.decode(topicBytes)
    const seq = readSeqFrame(seqBytes)
    if (seq === undefined) {
      report(
        new KinfError(
          'invalid_request',
          `kv-events: ${topic}: seq frame of ${seqBytes.length} bytes`,
        ),
      )
      return
    }
    let batch: DecodedEventBatch
    try {
      batch = decodeEventBatch(payload)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      report(new KinfError('invalid_request', `${reason} (${topic} seq ${seq})`, { cause: error }))
      return
    }
    try {
      onBatch(topic, seq, batch)
    } catch (error) {
      report(
        new KinfError('internal', `kv-events: onBatch failed on ${topic} seq ${seq}`, {
          cause: error,
        }),
      )
    }
  }

  async function run(): Promise<void> {
    try {
      for await (const frames of sub) receive(frames)
    } catch (error) {
      if (!sub.closed)
        report(new KinfError('internal', 'kv-events: subscriber stopped', { cause: error }))
    }
  }

  function connect(endpoint: string): void {
    try {
      sub.connect(endpoint)
    } catch (error) {
      throw new KinfError('invalid_config', `kv-events: cannot connect to ${endpoint}`, {
        cause: error,
      })
    }
  }

  let attached: void | Promise<void>
  try {
    attached = attach(sub, connect)
    sub.subscribe(topicPrefix)
  } catch (error) {
    sub.close()
    throw error
  }
  const ready = Promise.resolve(attached).catch((error: unknown) => {
    sub.close()
    throw error
  })
  const running = ready.then(run, () => {})

  return {
    ready,
    connect,
    disconnect(endpoint) {
      try {
        sub.disconnect(endpoint)
      } catch (error) {
        throw new KinfError('invalid_request', `kv-events: not connected to ${endpoint}`, {
          cause: error,
        })
      }
    },
    async close() {
      if (sub.closed) return
      sub.close()
      await running
    },
  }
}
