import { type Usage, usageOfJson } from '../../../shared/openai/usage.ts'

const contentMarker = Buffer.from('"content":"')
const textMarker = Buffer.from('"text":"')
const quote = 0x22

/** SSE events carrying generated text (the role chunk and the usage chunk carry none). */
export function countTokenEvents(chunk: Buffer): number {
  let count = 0
  for (let at = chunk.indexOf(contentMarker); at >= 0; at = chunk.indexOf(contentMarker, at + 1)) {
    if (chunk[at + contentMarker.length] !== quote) count++
  }
  for (let at = chunk.indexOf(textMarker); at >= 0; at = chunk.indexOf(textMarker, at + 1)) count++
  return count
}

/** The last usage block in the tail of an SSE stream (vLLM sends it after the last token). */
export function usageFromStream(tail: string): Usage | null {
  const events = tail.split('\n\n')
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]?.trim() ?? ''
    if (!event.startsWith('data: {')) continue
    const usage = usageOfJson(event.slice(6))
    if (usage) return usage
  }
  return null
}
