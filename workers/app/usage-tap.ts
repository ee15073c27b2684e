import { KinfError } from '../../shared/errors/kinf-error.ts'
import { maxChoices } from '../../shared/openai/can-assemble-from-stream.ts'
import { createRunningUsage } from '../../shared/openai/create-running-usage.ts'
import { sseErrorEnding } from '../../shared/openai/sse-error-ending.ts'
import { mayCarryUsage, type Usage } from '../../shared/openai/usage.ts'

/** What went by in a stream, for the quota ledger: how far it got and what it used. */
export interface MeteredStream {
  /** It reached `[DONE]`: the upstream finished the answer. */
  complete: boolean
  /**
   * The last usage block seen: the final one, or (asked with continuous_usage_stats) the
   * running count up to where the stream stopped.
   */
  usage: Usage | null
  /** Events that carried generated text or tool-call arguments. */
  textEvents: number
  /** That text, when asked for (collectText): what a provider's count is asked about. */
  text: string
}

export interface SseTapOptions {
  /** The client asked for no usage chunk: the usage-only chunk is dropped. */
  dropUsageChunk: boolean
  /**
   * The client did not ask for usage on every chunk (continuous_usage_stats), which the edge
   * asks for to count a stream the client leaves: it is removed from chunks with choices.
   */
  stripChunkUsage: boolean
  /** Collect the generated text (see MeteredStream.text). */
  collectText?: boolean
  /**
   * The request this stream answers: the usage it showed is kept for the edge's metrics
   * (recordedStreamUsage), the usage the client did not ask for included.
   */
  recordFor?: object
  /** Runs once, at the first event with generated text: the time to first token. */
  onFirstText?: () => void
  /** Each event's parsed data, in order (an assembler); `[DONE]` and unparsable data skipped. */
  onChunk?: (chunk: unknown) => void
  /** Runs once, when the stream ends, breaks or is cancelled. */
  onEnd: (metered: MeteredStream) => void
}

/**
 * Passes an SSE stream through while metering it (usage blocks, events with text), keeping
 * to the client's stream options: the usage the edge asked for on its own account is
 * removed. A stream whose upstream breaks ends with an error event and `[DONE]`.
 */
export function tapSseUsage(
  body: ReadableStream<Uint8Array>,
  options: SseTapOptions,
): ReadableStream<Uint8Array> {
  const meter = new StreamMeter(options)
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  let pending = ''
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(bytes, controller) {
      pending = lineFeeds(pending + decoder.decode(bytes, { stream: true }))
      // The events a chunk completes go on as one piece: one encoding per chunk, not per token.
      let out = ''
      let from = 0
      for (let cut = pending.indexOf('\n\n'); cut >= 0; cut = pending.indexOf('\n\n', from)) {
        const kept = meter.event(pending.slice(from, cut))
        if (kept !== null) out += `${kept}\n\n`
        from = cut + 2
      }
      pending = pending.slice(from)
      if (out !== '') controller.enqueue(encoder.encode(out))
    },
    flush(controller) {
      pending = lineFeeds(pending + decoder.decode(), true)
      if (pending !== '') controller.enqueue(encoder.encode(pending))
      meter.end()
    },
  })
  const reader = body.pipeThrough(transform).getReader()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (done) {
            meter.end()
            controller.close()
          } else controller.enqueue(value)
        } catch (error) {
          meter.end()
          // The upstream broke mid-stream (a scorer or pod gone): the client is told so, and
          // the stream ends as OpenAI's do, rather than being cut without a word.
          if (!meter.sawDone) controller.enqueue(encoder.encode(brokenStreamEvent(error)))
          controller.close()
        }
      },
      async cancel(reason) {
        meter.end()
        await reader.cancel(reason)
      },
      // Pull only when the client reads: queueing ahead would take the chunk a stalled client
      // leaves waiting, and limitEventStream would never see the stall it cuts.
    },
    { highWaterMark: 0 },
  )
}

/**
 * Watches an SSE stream on its way to the client, for the edge's metrics: the bytes go on
 * as they came, and a stream that errors errors here too (a stalled client's cut must still
 * drop the connection, limit-event-stream.ts), where tapSseUsage would end it in words.
 */
export function observeSseUsage(
  body: ReadableStream<Uint8Array>,
  options: Pick<SseTapOptions, 'onFirstText' | 'onEnd'>,
): ReadableStream<Uint8Array> {
  const meter = new StreamMeter({ dropUsageChunk: false, stripChunkUsage: false, ...options })
  const decoder = new TextDecoder()
  const reader = body.getReader()
  let pending = ''
  return new ReadableStream<Uint8Array>({
    // A stream cut upstream (limitEventStream's stall cut) errors this one at once, not at
    // its next read: a stalled client's connection is dropped by the runtime watching it.
    start(controller) {
      reader.closed.catch((error: unknown) => {
        meter.end()
        controller.error(error)
      })
    },
    async pull(controller) {
      let read: Awaited<ReturnType<typeof reader.read>>
      try {
        read = await reader.read()
      } catch (error) {
        meter.end()
        throw error
      }
      if (read.done) {
        meter.end()
        controller.close()
        return
      }
      pending = lineFeeds(pending + decoder.decode(read.value, { stream: true }))
      let from = 0
      for (let cut = pending.indexOf('\n\n'); cut >= 0; cut = pending.indexOf('\n\n', from)) {
        meter.event(pending.slice(from, cut))
        from = cut + 2
      }
      pending = pending.slice(from)
      controller.enqueue(read.value)
    },
    async cancel(reason) {
      meter.end()
      await reader.cancel(reason)
    },
  })
}

/**
 * The last usage of each request's answer (a stream's, SseTapOptions.recordFor; a JSON
 * answer's, recordUsage), for as long as the request lives.
 */
const recorded = new WeakMap<object, Usage>()

/**
 * The usage a request's upstream answer showed the edge (a stream's before the client's
 * options removed it), so the edge's metrics need not parse the answer again.
 */
export function recordedUsage(request: object): Usage | undefined {
  return recorded.get(request)
}

/** Keeps a JSON answer's usage for recordedUsage, as the stream tap keeps a stream's. */
export function recordUsage(request: object, usage: Usage): void {
  recorded.set(request, usage)
}

/** Generated text in a chunk: a non-empty content, text, reasoning or arguments string. */
const textMarker = /"(?:content|text|arguments|reasoning_content|reasoning)":\s*"[^"]/

class StreamMeter {
  sawDone = false
  /** Per choice with n > 1: each chunk's continuous usage counts its own choice only. */
  private readonly usage = createRunningUsage()
  private textEvents = 0
  private readonly text: string[] = []
  private ended = false
  private readonly options: SseTapOptions

  constructor(options: SseTapOptions) {
    this.options = options
  }

  /** One event: what to pass on (the event, rewritten, or null to drop it). */
  event(event: string): string | null {
    const data = dataOf(event)
    if (data === '[DONE]') {
      this.sawDone = true
      return event
    }
    if (textMarker.test(data) && this.textEvents++ === 0) this.options.onFirstText?.()
    const { onChunk, collectText } = this.options
    // Token chunks without usage are not parsed unless someone reads every chunk.
    if (!onChunk && !collectText && !mayCarryUsage(data)) return event
    let chunk: unknown
    try {
      chunk = JSON.parse(data)
    } catch {
      return event
    }
    onChunk?.(chunk)
    if (collectText) this.text.push(...textsOf(chunk))
    const found = (chunk as { usage?: unknown } | null)?.usage
    if (typeof found !== 'object' || found === null || Array.isArray(found)) return event
    const choices = (chunk as { choices?: unknown }).choices
    const counted = Array.isArray(choices) ? choices.filter(isIndexedChoice) : []
    this.usage.take(found as Record<string, unknown>, counted)
    if (!Array.isArray(choices) || choices.length === 0)
      return this.options.dropUsageChunk ? null : event
    if (!this.options.stripChunkUsage) return event
    return `data: ${withoutUsage(data, chunk)}`
  }

  end(): void {
    if (this.ended) return
    this.ended = true
    const current = this.usage.current()
    const usage = current !== null && 'usage' in current ? current.usage : null
    if (usage !== null && this.options.recordFor) recorded.set(this.options.recordFor, usage)
    this.options.onEnd({
      complete: this.sawDone,
      usage,
      textEvents: this.textEvents,
      text: this.text.join(''),
    })
  }
}

/** An event's data: its `data:` lines' values (vLLM writes one line an event). */
function dataOf(event: string): string {
  if (!event.includes('\n')) return event.startsWith('data:') ? event.slice(5).trimStart() : ''
  return event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n')
}

/**
 * A chunk's JSON without its `usage` member: cut out of the text where vLLM writes it (the
 * last member: keys, numbers and nested objects), else written again from the parsed chunk.
 * Every token chunk of a stream the edge asked usage for goes through here.
 */
function withoutUsage(data: string, chunk: unknown): string {
  const at = data.lastIndexOf(',"usage":{')
  if (at >= 0) {
    let depth = 0
    let end = -1
    for (let i = at + 9; i < data.length; i++) {
      const c = data.charCodeAt(i)
      if (c === 0x22) i = data.indexOf('"', i + 1) // a key: no braces or escapes in vLLM's
      if (i < 0) break
      if (c === 0x7b) depth++
      else if (c === 0x7d && --depth === 0) {
        end = i + 1
        break
      }
    }
    if (end > 0 && data.slice(end).trim() === '}') return data.slice(0, at) + data.slice(end)
  }
  const copy = { ...(chunk as Record<string, unknown>) }
  delete copy.usage
  return JSON.stringify(copy)
}

/** A choice the running usage may count: an object with a sane index. */
function isIndexedChoice(choice: unknown): choice is Record<string, unknown> {
  const index = (choice as { index?: unknown } | null)?.index
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < maxChoices
}

/** The generated text of a chat or completions chunk: content, reasoning, tool arguments. */
function textsOf(chunk: unknown): string[] {
  const texts: string[] = []
  const choices = (chunk as { choices?: unknown })?.choices
  if (!Array.isArray(choices)) return texts
  for (const choice of choices as Record<string, unknown>[]) {
    const delta = (choice?.delta ?? {}) as Record<string, unknown>
    for (const value of [choice?.text, delta.content, delta.reasoning_content, delta.reasoning])
      if (typeof value === 'string') texts.push(value)
    if (Array.isArray(delta.tool_calls))
      for (const call of delta.tool_calls as {
        function?: { name?: unknown; arguments?: unknown }
      }[]) {
        if (typeof call?.function?.name === 'string') texts.push(call.function.name)
        if (typeof call?.function?.arguments === 'string') texts.push(call.function.arguments)
      }
  }
  return texts
}

/** How a stream that broke upstream ends. */
function brokenStreamEvent(error: unknown): string {
  const why = (error as Error)?.message ?? 'the connection broke'
  return sseErrorEnding(new KinfError('upstream_error', `the answer stopped upstream: ${why}`))
}

/**
 * SSE lines may end in CR LF or CR as well as LF: all become LF, so events split on one
 * blank line whatever the upstream wrote. A CR at the end may be half of a CR LF whose LF
 * is in the next chunk, so it waits (until the stream ends).
 */
function lineFeeds(text: string, ended = false): string {
  // The usual stream (vLLM writes LF) costs one scan per chunk, no copy.
  if (!text.includes('\r')) return text
  const held = !ended && text.endsWith('\r')
  const whole = held ? text.slice(0, -1) : text
  return whole.replace(/\r\n?/g, '\n') + (held ? '\r' : '')
}
