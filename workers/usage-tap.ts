import { z } from 'zod'

const Usage = z.looseObject({
  prompt_tokens: z.int().min(0).optional(),
  completion_tokens: z.int().min(0).optional(),
  total_tokens: z.int().min(0).optional(),
})
export type Usage = z.infer<typeof Usage>

const Chunk = z.looseObject({ usage: Usage.nullish(), choices: z.array(z.unknown()).optional() })

/** `"usage": {`, with or without the space Python's json module puts there. */
const usageObject = /"usage":\s*\{/

/** Tokens a finished answer used, for the quota ledger; null when it did not say. */
export function usageTokens(usage: Usage | null | undefined): number | null {
  if (!usage) return null
  if (usage.total_tokens !== undefined) return usage.total_tokens
  if (usage.prompt_tokens === undefined && usage.completion_tokens === undefined) return null
  return (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)
}

/** The usage of a non-streamed OpenAI answer. */
export function usageOfJson(text: string): Usage | null {
  try {
    return Chunk.parse(JSON.parse(text)).usage ?? null
  } catch {
    return null
  }
}

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
    // Token chunks carry no usage object (or `"usage":null`): only parse the ones that do.
    if (!usageObject.test(data)) return event
    let chunk: z.infer<typeof Chunk> | null = null
    try {
      chunk = Chunk.parse(JSON.parse(data))
    } catch {
      return event
    }
    if (chunk.usage) usage = chunk.usage
    const usageOnly = chunk.usage && (chunk.choices?.length ?? 0) === 0
    return options.dropUsageChunk && usageOnly ? null : event
  }
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(bytes, controller) {
      pending += decoder.decode(bytes, { stream: true })
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
      pending += decoder.decode()
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
        controller.error(error)
      }
    },
    async cancel(reason) {
      end()
      await reader.cancel(reason)
    },
  })
}
