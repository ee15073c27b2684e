import { KinfError } from '../../shared/errors/kinf-error.ts'
import { sseErrorEnding } from '../../shared/openai/sse-error-ending.ts'

export interface StreamLimits {
  maxStreamSeconds: number
  streamStallSeconds: number
}

/** Why the edge ended a stream itself. */
export type StreamCut = 'duration' | 'stall'

const encoder = new TextEncoder()

type Timer = ReturnType<typeof setTimeout>

function stop(timer: Timer | undefined): void {
  if (timer !== undefined) clearTimeout(timer)
}

/**
 * An SSE answer held to the stream limits. Past maxStreamSeconds the upstream is cancelled
 * and the client gets an OpenAI-style error event, then `data: [DONE]`. A client that reads
 * nothing for streamStallSeconds while a chunk waits for it (the runtime stops pulling
 * under backpressure, so nothing piles up meanwhile) is cut: upstream cancelled, stream
 * errored, which makes the runtime drop the connection. Other answers pass unchanged.
 */
export function limitEventStream(
  response: Response,
  limits: StreamLimits,
  watch: { nowMs: () => number; onCut: (why: StreamCut) => void },
): Response {
  const { nowMs, onCut } = watch
  const type = response.headers.get('content-type') ?? ''
  if (!response.body || !type.includes('text/event-stream')) return response
  const reader = response.body.getReader()
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined
  let duration: Timer | undefined
  let stall: Timer | undefined
  /** Since when a chunk has waited for the client to take it; null while it reads. */
  let waitingSince: number | null = null
  let expired = false
  let ending = false
  let finished = false
  let pulling = false
  const finish = () => {
    finished = true
    stop(duration)
    stop(stall)
  }
  const cancelUpstream = (why: string) => {
    reader.cancel(new KinfError('upstream_error', why)).catch(() => {})
  }
  const cutStalled = () => {
    finish()
    cancelUpstream('the client stopped reading')
    onCut('stall')
    controller?.error(new KinfError('upstream_error', 'the client stopped reading'))
  }
  // One timer per wait, not per chunk: a stream that is read keeps pushing the wait back,
  // and the timer only looks again when it fires (chunks are the per-token hot path).
  const checkStall = () => {
    stall = undefined
    if (finished || waitingSince === null) return
    const left = limits.streamStallSeconds * 1000 - (nowMs() - waitingSince)
    if (left <= 0) cutStalled()
    else stall = setTimeout(checkStall, left)
  }
  const armStall = () => {
    waitingSince = nowMs()
    stall ??= setTimeout(checkStall, limits.streamStallSeconds * 1000)
  }
  const endWithError = () => {
    ending = true
    const failure = new KinfError(
      'upstream_error',
      `the stream was open longer than ${limits.maxStreamSeconds} s, this service's limit`,
      { openAiCode: 'stream_duration_exceeded' },
    )
    controller?.enqueue(encoder.encode(sseErrorEnding(failure)))
    // Closed on the next pull, once the client has taken the ending; cut if it never does.
    armStall()
  }
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c
      duration = setTimeout(() => {
        if (finished) return
        expired = true
        cancelUpstream('stream duration limit')
        onCut('duration')
        // A read under way ends (the cancel resolves it) and pull ends the stream.
        if (!pulling) endWithError()
      }, limits.maxStreamSeconds * 1000)
    },
    async pull(c) {
      waitingSince = null
      if (ending) {
        finish()
        c.close()
        return
      }
      pulling = true
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        if (expired) return endWithError()
        finish()
        c.error(error)
        return
      } finally {
        pulling = false
      }
      if (expired) return endWithError()
      if (next.done) {
        finish()
        c.close()
        return
      }
      c.enqueue(next.value)
      if ((c.desiredSize ?? 1) <= 0) armStall()
    },
    cancel(reason) {
      finish()
      return reader.cancel(reason)
    },
  })
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}
