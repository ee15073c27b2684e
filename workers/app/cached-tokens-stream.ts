import { mayCarryUsage, withCachedTokensJson } from '../../shared/openai/usage.ts'

const dataPrefix = 'data: '

/**
 * An SSE stream whose usage blocks all carry prompt_tokens_details.cached_tokens (0 when
 * the pod left it out: shared/openai/usage.ts withCachedTokens). Reads the tap's output
 * (usage-tap.ts), whose events end in "\n\n" with plain line feeds; only events that may
 * carry usage are parsed, so token chunks pass as they came.
 */
export function cachedTokensInStream(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  let pending = ''
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true })
        const cut = pending.lastIndexOf('\n\n')
        if (cut < 0) return
        const whole = pending.slice(0, cut + 2)
        pending = pending.slice(cut + 2)
        controller.enqueue(encoder.encode(mayCarryUsage(whole) ? fixEvents(whole) : whole))
      },
      flush(controller) {
        const rest = pending + decoder.decode()
        if (rest !== '') controller.enqueue(encoder.encode(fixEvents(rest)))
      },
    }),
  )
}

function fixEvents(text: string): string {
  return text
    .split('\n')
    .map((line) =>
      line.startsWith(dataPrefix)
        ? dataPrefix + withCachedTokensJson(line.slice(dataPrefix.length))
        : line,
    )
    .join('\n')
}
