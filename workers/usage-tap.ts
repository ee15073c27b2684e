import { KinfError } from '../shared/errors/kinf-error.ts'
import { sseErrorEnding } from '../shared/openai/sse-error-ending.ts'
import { mayCarryUsage, type Usage, usageOf } from '../shared/openai/usage.ts'

/**
 * Passes an SSE stream through while reading its usage. When the edge asked for usage
 * only for its own accounting (the client did not), the usage-only chunk is dropped so the
 * client sees the stream it asked for. `onEnd` runs once, with the usage or null.
 */
export function tapSseUsage(
  body: ReadableStream<Uint8Array>,
  options: { dropUsageChunk: boolean; onEnd: (usage: Usage | null) => void },
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  let pending = ''
  let usage: Usage | null = null
  let sawDone = false
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    options.onEnd(usage)
  }
  const process = (event: string): string | null => {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n')
    if (data === '[DONE]') sawDone = true
    // Token chunks carry no usage object (or `"usage":null`): only parse the ones that do.
    if (!mayCarryUsage(data)) return event
    let chunk: unknown
    try {
      chunk = JSON.parse(data)
    } catch {
      return event
    }
    const found = usageOf(chunk)
    if (found) usage = found
    const choices = (chunk as { choices?: unknown }).choices
    const usageOnly = found !== null && (!Array.isArray(choices) || choices.length === 0)
    return options.dropUsageChunk && usageOnly ? null : event
  }
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(bytes, controller) {
      pending = lineFeeds(pending + decoder.decode(bytes, { stream: true }))
      let cut = pending.indexOf('\n\n')
      while (cut >= 0) {
        const event = pending.slice(0, cut)
        pending = pending.slice(cut + 2)
        const kept = process(event)
        if (kept !== null) controller.enqueue(encoder.encode(`${kept}\n\n`))
        cut = pending.indexOf('\n\n')
      }
    },
    flush(controller) {
      pending = lineFeeds(pending + decoder.decode(), true)
      if (pending !== '') controller.enqueue(encoder.encode(pending))
      end()
    },
  })
  const reader = body.pipeThrough(transform).getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          end()
          controller.close()
        } else controller.enqueue(value)
      } catch (error) {
        end()
        // The upstream broke mid-stream (a scorer or pod gone): the client is told so, and
        // the stream ends as OpenAI's do, rather than being cut without a word.
        if (sawDone) controller.close()
        else {
          controller.enqueue(encoder.encode(brokenStreamEvent(error)))
          controller.close()
        }
      }
    },
    async cancel(reason) {
      end()
      await reader.cancel(reason)
    },
  })
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
