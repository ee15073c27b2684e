import { Dealer } from 'zeromq'
import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { decodeEventBatch } from './decode-event-batch.ts'
import type { DecodedEventBatch } from './kv-cache-event.ts'
import { readSeqFrame, replayEndSeq, seqFrame } from './seq-frame.ts'
import { Count, MessageBytes, TimeoutMs } from './socket-options.ts'

export const ReplayRequest = z.strictObject({
  endpoint: z.string().describe("The pod's replay (ROUTER) address"),
  startSeq: z.bigint().describe('First seq wanted, usually last seen + 1'),
  timeoutMs: TimeoutMs.default(5_000).describe(
    'Longest wait for the next reply message (not for the whole replay)',
  ),
  maxBatches: Count.default(1_000_000).describe(
    'More batches than this is not a vLLM buffer: refused',
  ),
  maxMessageBytes: MessageBytes.default(64 * 1024 * 1024),
})
export type ReplayRequest = z.infer<typeof ReplayRequest>
export type ReplayRequestInput = z.input<typeof ReplayRequest>

export interface ReplayedBatch {
  seq: bigint
  /** With the events it had to skip, as a live batch (decode-event-batch.ts). */
  batch: DecodedEventBatch
}

const emptyFrame = new Uint8Array(0)

/**
 * Asks a publisher for its buffered batches with seq >= startSeq, oldest first, and reads
 * until the END marker. A DEALER with an empty delimiter, not vLLM's REQ example: the reply
 * is many messages, which a strict REQ refuses. There is no gap signal: if startSeq was
 * evicted the replay simply starts later, so compare the first seq with what you asked
 * for. Also reads llm-d-inference-sim's replies, which carry a topic frame.
 *
 * Rejects with KinfError 'upstream_unavailable' when no message arrives for timeoutMs
 * (nothing answering, or the END marker lost), 'invalid_request' for malformed replies.
 */
export async function requestReplay(input: ReplayRequestInput): Promise<ReplayedBatch[]> {
  if (input.startSeq < 0n || input.startSeq > replayEndSeq) {
    throw new KinfError(
      'invalid_request',
      `kv-events: replay start ${input.startSeq} is not a uint64`,
    )
  }
  const { endpoint, startSeq, timeoutMs, maxBatches, maxMessageBytes } = parseReplayRequest(input)
  const dealer = new Dealer({
    linger: 0,
    sendTimeout: timeoutMs,
    receiveTimeout: timeoutMs,
    maxMessageSize: maxMessageBytes,
  })
  try {
    try {
      dealer.connect(endpoint)
    } catch (error) {
      throw new KinfError('invalid_config', `kv-events: cannot connect to ${endpoint}`, {
        cause: error,
      })
    }
    await dealer.send([emptyFrame, seqFrame(startSeq)]).catch((error: unknown) => {
      throw timedOut(endpoint, 'sending the request', error)
    })
    const batches: ReplayedBatch[] = []
    for (;;) {
      const frames = await dealer.receive().catch((error: unknown) => {
        throw timedOut(endpoint, `${batches.length} batches without the end marker`, error)
      })
      const [seqBytes, payload] = replyFrames(frames)
      const seq = seqBytes ? readSeqFrame(seqBytes) : undefined
      if (seq === undefined || payload === undefined) {
        throw new KinfError('invalid_request', `kv-events: malformed replay reply from ${endpoint}`)
      }
      if (seq === replayEndSeq) return batches
      if (batches.length >= maxBatches) {
        throw new KinfError(
          'invalid_request',
          `kv-events: replay from ${endpoint} exceeds ${maxBatches} batches`,
        )
      }
      try {
        batches.push({ seq, batch: decodeEventBatch(payload) })
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw new KinfError('invalid_request', `${reason} (replay from ${endpoint}, seq ${seq})`, {
          cause: error,
        })
      }
    }
  } finally {
    dealer.close()
  }
}

/** Checked before any socket exists (see socket-options.ts). */
function parseReplayRequest(input: ReplayRequestInput): ReplayRequest {
  return parseOptions(ReplayRequest, input, 'kv-events')
}

/**
 * [seq, payload] out of a reply: vLLM sends `['', seq, payload]` to a DEALER,
 * llm-d-inference-sim `['', topic, seq, payload]`; the delimiter is dropped when present.
 */
function replyFrames(frames: Buffer[]): (Buffer | undefined)[] {
  const body = frames[0]?.length === 0 && frames.length >= 3 ? frames.slice(1) : frames
  if (body.length === 2) return body
  if (body.length === 3) return body.slice(1)
  return []
}

function timedOut(endpoint: string, what: string, cause: unknown): KinfError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new KinfError(
    'upstream_unavailable',
    `kv-events: replay from ${endpoint}: ${what} (${reason})`,
    {
      cause,
    },
  )
}
