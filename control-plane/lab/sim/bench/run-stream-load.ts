import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'

export interface StreamLoadOptions {
  url: string
  streams: number
  seconds: number
  promptWords: readonly string[]
  promptTokens: number
  outputTokens: number
  seed: number
}

export interface StreamLoadResult {
  requests: number
  tokens: number
  failures: number
  seconds: number
}

/**
 * Closed-loop streaming clients against one OpenAI endpoint: each stream sends a chat
 * request (a fresh prompt of single-token words, ignore_eos), reads the SSE answer to
 * [DONE], and sends the next, until the time is up.
 */
export async function runStreamLoad(options: StreamLoadOptions): Promise<StreamLoadResult> {
  const random = createSeededRandom(options.seed)
  const words = options.promptWords
  const deadline = performance.now() + options.seconds * 1000
  const result: StreamLoadResult = { requests: 0, tokens: 0, failures: 0, seconds: options.seconds }
  const prompt = () =>
    Array.from(
      { length: options.promptTokens },
      () => words[Math.floor(random() * words.length)],
    ).join('')
  const stream = async () => {
    while (performance.now() < deadline) {
      try {
        const response = await fetch(`${options.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            messages: [{ role: 'user', content: prompt() }],
            max_tokens: options.outputTokens,
            ignore_eos: true,
            stream: true,
          }),
        })
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
        const decoder = new TextDecoder()
        let tail = ''
        for await (const chunk of response.body) {
          const text = tail + decoder.decode(chunk as Uint8Array, { stream: true })
          const events = text.split('\n\n')
          tail = events.pop() ?? ''
          for (const event of events) if (event.includes('"delta":{"content"')) result.tokens++
        }
        result.requests++
      } catch {
        result.failures++
      }
    }
  }
  await Promise.all(Array.from({ length: options.streams }, stream))
  return result
}
