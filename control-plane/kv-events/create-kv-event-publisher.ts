import { setTimeout as delay } from 'node:timers/promises'
import { Publisher, Router, type Socket } from 'zeromq'
import { z } from 'zod'
import { functionOption, parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { encodeEventBatch, KvEventEncoding } from './encode-event-batch.ts'
import { createReplayBuffer, type ReplayBuffer } from './replay-buffer.ts'
import { Count, HighWaterMark, TimeoutMs } from './socket-options.ts'
import type { PublishedEvent } from './vllm-event-structs.ts'

const ignore = () => {}

export const KvEventPublisherOptions = z.strictObject({
  endpoint: z
    .string()
    .describe(
      "PUB address, as vLLM's endpoint: bound when it has * or :: or is ipc/inproc, else connected",
    ),
  replayEndpoint: z
    .string()
    .nullable()
    .default(null)
    .describe('ROUTER address for replays (always bound); none by default, as in vLLM'),
  topic: z.string().default('').describe('Frame 0 of every message, UTF-8'),
  bufferSteps: Count.default(10_000).describe('Batches kept for replay'),
  encoding: KvEventEncoding,
  hwm: HighWaterMark.default(100_000).describe(
    "Per-subscriber send high-water mark, in messages (vLLM's hwm)",
  ),
  dataParallelRank: z
    .int()
    .min(0)
    .nullable()
    .default(0)
    .describe('Written into every batch, as vLLM fills it in when the engine left it None'),
  replaySendTimeoutMs: TimeoutMs.default(5_000).describe(
    'How long one replay reply may wait on a client that does not read before it is dropped',
  ),
  replayFraming: z
    .enum(['topic', 'legacy'])
    .default('topic')
    .describe(
      "Replay replies: 'topic' ['', topic, seq, payload] and end ['', '', END_SEQ, ''] (vLLM PR #45177); 'legacy' ['', seq, payload] and ['', END_SEQ, '']",
    ),
  // A function default is called for the value: this one gives the no-op.
  onError: functionOption<(error: KinfError) => void>()
    .default(() => ignore)
    .describe('Replay failures; the publisher carries on'),
})
export type KvEventPublisherOptions = z.infer<typeof KvEventPublisherOptions>
export type KvEventPublisherOptionsInput = z.input<typeof KvEventPublisherOptions>

/** Checked before any socket exists (see socket-options.ts). */
function parsePublisherOptions(input: KvEventPublisherOptionsInput): KvEventPublisherOptions {
  return parseOptions(KvEventPublisherOptions, input, 'kv-events')
}

export interface PublishOptions {
  /**
   * false: number and buffer the batch but do not send it, as when a network or a full
   * queue loses it. Subscribers then see a gap and can replay it (fault injection).
   */
  send?: boolean
}

export interface KvEventPublisher {
  /** The PUB address, with the real port when bound to `*`. */
  readonly endpoint: string
  /** The ROUTER address, with the real port, or null without replay. */
  readonly replayEndpoint: string | null
  /** The seq the next batch gets (= batches published so far; a new publisher starts at 0). */
  readonly seq: bigint
  /** Batches the PUB socket refused to queue; they stay replayable. */
  readonly dropped: number
  /**
   * Sends one batch and returns its seq. Never waits: the batch enters the replay buffer,
   * then ZMQ queues it or drops it (see createKvEventPublisher).
   */
  publish(events: readonly PublishedEvent[], ts: number, options?: PublishOptions): bigint
  close(): Promise<void>
}

const emptyFrame = new Uint8Array(0)

/** vLLM's `seq.to_bytes(8, "big")`. */
function seqFrame(seq: bigint): Uint8Array {
  const frame = new Uint8Array(8)
  new DataView(frame.buffer).setBigUint64(0, seq)
  return frame
}

/** `ZmqEventPublisher.END_SEQ`: `(-1).to_bytes(8, "big", signed=True)`. */
const endFrame = seqFrame(0xffff_ffff_ffff_ffffn)

/** `int.from_bytes(start_seq_bytes, "big")`; vLLM accepts any length, we want 8 bytes. */
function readStartSeq(frame: Uint8Array): bigint | undefined {
  if (frame.length !== 8) return undefined
  return new DataView(frame.buffer, frame.byteOffset, 8).getBigUint64(0)
}

/**
 * vLLM's `ZmqEventPublisher` (`vllm/distributed/kv_events.py`): messages `[topic, seq
 * (8 bytes BE), msgpack batch]` on a PUB socket, seq from 0 and +1 per batch, the last
 * `bufferSteps` batches kept for replay on a ROUTER socket, whose replies carry the topic
 * too since vLLM PR #45177 (`replayFraming`).
 *
 * Backpressure: publish never blocks the caller. PUB semantics are kept: the socket never
 * waits (send timeout 0), and libzmq drops messages for a subscriber whose queue holds
 * `hwm` messages, as it does in vLLM. A batch is buffered for replay before it is sent, so
 * a subscriber that lost one sees a gap in seq and can fetch it. Replies to a replay
 * request do wait for the client (ROUTER `mandatory`), since libzmq would otherwise drop
 * them, END marker included, past its 1000-message default queue; a client that does not
 * read for `replaySendTimeoutMs`, or has gone, is abandoned. Requests are served one at a
 * time, so a stuck client delays the next ones by at most that timeout.
 */
export async function createKvEventPublisher(
  input: KvEventPublisherOptionsInput,
): Promise<KvEventPublisher> {
  const options = parsePublisherOptions(input)
  const { encoding, dataParallelRank, onError } = options
  const ring = createReplayBuffer(options.bufferSteps)
  const topicFrame = new TextEncoder().encode(options.topic)
  const sendTimeout = options.replaySendTimeoutMs
  const pub = new Publisher({ linger: 0, sendHighWaterMark: options.hwm, sendTimeout: 0 })
  let router: Router | undefined
  let endpoint: string
  let replayEndpoint: string | null = null
  try {
    endpoint = await attach(pub, options.endpoint)
    if (options.replayEndpoint) {
      // A request is identity + delimiter + 8 bytes; refuse anything much larger.
      router = new Router({ linger: 0, mandatory: true, sendTimeout, maxMessageSize: 256 })
      replayEndpoint = await bindWithRetry(router, options.replayEndpoint)
    }
  } catch (error) {
    pub.close()
    router?.close()
    throw error
  }

  let next = 0n
  let dropped = 0
  let closed = false
  const head = options.replayFraming === 'topic' ? [emptyFrame, topicFrame] : [emptyFrame]
  const endHead = options.replayFraming === 'topic' ? [emptyFrame, emptyFrame] : [emptyFrame]
  const framing: ReplayFraming = { head, endHead }
  const serving = router ? serveReplays(router, ring, framing, onError) : Promise.resolve()

  return {
    endpoint,
    replayEndpoint,
    get seq() {
      return next
    },
    get dropped() {
      return dropped
    },
    publish(events, ts, publishOptions) {
      if (closed) throw new KinfError('internal', 'kv-events: publish on a closed publisher')
      const payload = encodeEventBatch({ ts, events: [...events], dataParallelRank }, encoding)
      const seq = next++
      ring.push(seq, payload)
      if (publishOptions?.send === false) return seq
      pub.send([topicFrame, seqFrame(seq), payload]).catch(() => {
        dropped++
      })
      return seq
    },
    async close() {
      if (closed) return
      closed = true
      pub.close()
      router?.close()
      await serving
    },
  }
}

/** vLLM's rule (`ZmqEventPublisher`): bind wildcard and local endpoints, connect the rest. */
async function attach(pub: Publisher, endpoint: string): Promise<string> {
  const binds =
    endpoint.includes('*') ||
    endpoint.includes('::') ||
    endpoint.startsWith('ipc://') ||
    endpoint.startsWith('inproc://')
  if (binds) return bindWithRetry(pub, endpoint)
  try {
    pub.connect(endpoint)
  } catch (error) {
    throw new KinfError('invalid_config', `kv-events: cannot connect to ${endpoint}`, {
      cause: error,
    })
  }
  return endpoint
}

/**
 * Binds, retrying for about a second while the address is in use: libzmq closes a listener
 * in its I/O thread after close() returns, so a restarted publisher can race its
 * predecessor for the port.
 */
async function bindWithRetry(socket: Socket, endpoint: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      await socket.bind(endpoint)
      return socket.lastEndpoint ?? endpoint
    } catch (error) {
      const inUse = (error as { code?: unknown }).code === 'EADDRINUSE'
      if (!inUse || attempt >= 20) {
        throw new KinfError('invalid_config', `kv-events: cannot bind ${endpoint}`, {
          cause: error,
        })
      }
      await delay(50)
    }
  }
}

/** The frames before seq in a reply, and before END_SEQ in the end marker. */
interface ReplayFraming {
  head: Uint8Array[]
  endHead: Uint8Array[]
}

async function serveReplays(
  router: Router,
  ring: ReplayBuffer,
  framing: ReplayFraming,
  onError: (error: KinfError) => void,
): Promise<void> {
  try {
    for await (const frames of router) {
      // [identity, delimiter, start_seq]; vLLM logs anything else and ignores it.
      const [identity, , start] = frames
      const startSeq = frames.length === 3 && start ? readStartSeq(start) : undefined
      if (identity === undefined || startSeq === undefined) continue
      const entries = ring.since(startSeq)
      try {
        for (const { seq, payload } of entries) {
          await router.send([identity, ...framing.head, seqFrame(seq), payload])
        }
        await router.send([identity, ...framing.endHead, endFrame, emptyFrame])
      } catch (error) {
        if (router.closed) return
        report(
          onError,
          'upstream_unavailable',
          `replay of ${entries.length} batches abandoned`,
          error,
        )
      }
    }
  } catch (error) {
    if (!router.closed) report(onError, 'internal', 'replay socket failed; replay stopped', error)
  }
}

function report(
  onError: (error: KinfError) => void,
  code: 'upstream_unavailable' | 'internal',
  message: string,
  cause: unknown,
): void {
  const reason = cause instanceof Error ? cause.message : String(cause)
  try {
    onError(new KinfError(code, `kv-events: ${message}: ${reason}`, { cause }))
  } catch {
    // A throwing handler must not stop the replay service.
  }
}
