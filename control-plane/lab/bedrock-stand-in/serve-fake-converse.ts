import { eventStreamFrame } from './event-stream-frame.ts'
import type { FakeBedrockFaults } from './fake-bedrock-fault.ts'
import { fakeConverseResponse, fakeStreamEvents } from './fake-converse-output.ts'
import type { FakeReply } from './plan-fake-reply.ts'

/** What the fake model processed for one Converse or ConverseStream call it ran. */
export interface FakeBedrockProcessed {
  /** Its place in `requests`, from 1 (the same number ends its requestId). */
  requestNumber: number
  requestId: string
  modelId: string
  operation: 'converse' | 'converse-stream'
  /**
   * Every input token read, cache reads and writes included: usage.inputTokens +
   * cacheReadInputTokens + cacheWriteInputTokens, and what CountTokens answers for it.
   */
  inputTokens: number
  cacheReadInputTokens: number
  cacheWriteInputTokens: number
  /**
   * Output tokens generated: all of the answer's, or those generated before the client
   * left (generation stops then, as a provider's does) or an injected stream error.
   */
  outputTokens: number
  /** The whole answer was generated and sent. */
  completed: boolean
}

/** The time the pacing of output reads and waits on; a test passes its own. */
export interface FakeClock {
  /** Milliseconds, from any origin. */
  now(): number
  /** Resolves after `ms`, or early once `signal` is aborted (never rejects). */
  sleep(ms: number, signal: AbortSignal): Promise<void>
}

/** What the handler uses of a response, common to HTTP/1.1 and HTTP/2's compatibility API. */
export interface FakeResponse {
  readonly writableFinished: boolean
  readonly destroyed: boolean
  readonly headersSent: boolean
  writeHead(status: number, headers: Record<string, string>): unknown
  write(chunk: Uint8Array): unknown
  end(chunk?: Uint8Array | string): unknown
  on(event: 'close', listener: () => void): unknown
  destroy(): unknown
  /** HTTP/2 only. */
  readonly stream?: { readonly rstCode: number }
}

export interface ServeFakeConverse {
  operation: 'converse' | 'converse-stream'
  requestId: string
  reply: FakeReply
  faults: FakeBedrockFaults
  processed: FakeBedrockProcessed
  clock: FakeClock
  /** Aborted when the client goes away before the answer is complete. */
  gone: AbortSignal
  /** Answers a JSON body; returns the status. */
  send(status: number, body: unknown): number
  /** Set to the answer's HTTP status. */
  record: { status: number }
}

/** The time the fake reports the model took; fixed, so answers are reproducible. */
const latencyMs = 42

/**
 * Waits for each output token's turn, `pace` tokens a second from the first token's call
 * (without `pace`, at once). Resolves false once the client has gone: nothing more is
 * generated. Turns are reckoned from the start, not the last wake-up, so timers that fire
 * late slow no answer down.
 */
function tokenTurns(pace: number | undefined, clock: FakeClock, gone: AbortSignal) {
  let start: number | undefined
  let generated = 0
  return async (): Promise<boolean> => {
    if (gone.aborted) return false
    if (pace !== undefined) {
      start ??= clock.now()
      const wait = start + ((generated + 1) * 1000) / pace - clock.now()
      if (wait > 0) await clock.sleep(wait, gone)
      if (gone.aborted) return false
    }
    generated++
    return true
  }
}

/**
 * Generates a planned reply and sends it: Converse's JSON once every token is generated,
 * or ConverseStream's events as their tokens are; `processed` counts what was generated.
 */
export async function serveFakeConverse(res: FakeResponse, call: ServeFakeConverse): Promise<void> {
  const { reply, faults, processed, clock, gone } = call
  const nextToken = tokenTurns(faults.pace, clock, gone)
  const left = () => res.destroyed || gone.aborted
  if (call.operation === 'converse') {
    if (faults.delayMs) await clock.sleep(faults.delayMs, gone)
    for (let i = 0; i < reply.usage.outputTokens; i++) {
      if (!(await nextToken())) return
      processed.outputTokens++
    }
    if (left()) return
    call.record.status = call.send(200, fakeConverseResponse(reply, latencyMs))
    processed.completed = true
    return
  }
  call.record.status = 200
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-requestid': call.requestId,
  })
  for (const [i, event] of fakeStreamEvents(reply, latencyMs).entries()) {
    if (left()) return
    if (faults.streamErrorAfter === i) {
      res.end(
        eventStreamFrame('exception', 'modelStreamErrorException', {
          message: 'The model stream failed (injected fault).',
          originalStatusCode: 500,
          originalMessage: 'injected',
        }),
      )
      return
    }
    if (faults.delayMs) await clock.sleep(faults.delayMs, gone)
    if (event.token) {
      if (!(await nextToken())) return
      processed.outputTokens++
    }
    if (left()) return
    res.write(eventStreamFrame('event', event.type, event.payload))
  }
  res.end()
  processed.completed = true
}
