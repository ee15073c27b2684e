import type { CompletionUsage } from 'openai/resources/completions'

/** What a server-sent event stream of chat completion chunks held when it ended. */
export interface StreamVerdict {
  /** `data: [DONE]` arrived. */
  done: boolean
  /** A chunk with a finish_reason arrived. */
  finished: boolean
  /** An `{"error": …}` event's code (or type), when one arrived. */
  errorCode: string | null
  usage: CompletionUsage | null
  /** When the first chunk with generated text arrived (ms on the caller's clock). */
  firstTokenAtMs: number | null
  /** Why reading stopped early: the deadline, or the connection breaking. */
  broken: string | null
}

/**
 * Reads a stream to its end or the deadline, parsing each event as it arrives: whether the
 * stream was whole (finish_reason, then [DONE]) is the verdict's to tell, not the reader's.
 */
export async function readChaosStream(
  body: ReadableStream<Uint8Array> | null,
  deadlineMs: number,
  nowMs: () => number,
  onEvent?: (data: string) => void,
): Promise<StreamVerdict> {
  const verdict: StreamVerdict = {
    done: false,
    finished: false,
    errorCode: null,
    usage: null,
    firstTokenAtMs: null,
    broken: null,
  }
  if (!body) return { ...verdict, broken: 'no body' }
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let pending = ''
  const timer = setTimeout(
    () => {
      verdict.broken = 'no end before the timeout (a hang)'
      void reader.cancel().catch(() => {})
    },
    Math.max(0, deadlineMs - nowMs()),
  )
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      pending += decoder.decode(value, { stream: true })
      const events = pending.split('\n\n')
      pending = events.pop() ?? ''
      for (const event of events) takeEvent(event, verdict, nowMs, onEvent)
    }
  } catch (error) {
    verdict.broken ??= `the connection broke: ${(error as Error).message}`
  } finally {
    clearTimeout(timer)
  }
  return verdict
}

function takeEvent(
  event: string,
  verdict: StreamVerdict,
  nowMs: () => number,
  onEvent: ((data: string) => void) | undefined,
): void {
  const data = event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n')
  if (data === '') return
  onEvent?.(data)
  if (data === '[DONE]') {
    verdict.done = true
    return
  }
  let chunk: {
    error?: { code?: unknown; type?: unknown }
    choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[]
    usage?: CompletionUsage | null
  }
  try {
    chunk = JSON.parse(data)
  } catch {
    return
  }
  if (chunk.error) {
    const { code, type } = chunk.error
    verdict.errorCode = typeof code === 'string' ? code : typeof type === 'string' ? type : 'error'
    return
  }
  if (chunk.usage) verdict.usage = chunk.usage
  for (const choice of chunk.choices ?? []) {
    if (
      verdict.firstTokenAtMs === null &&
      typeof choice.delta?.content === 'string' &&
      choice.delta.content !== ''
    )
      verdict.firstTokenAtMs = nowMs()
    if (choice.finish_reason) verdict.finished = true
  }
}
