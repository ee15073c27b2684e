import { type Usage, usageOf } from '../../../shared/openai/usage.ts'

/** What a streamed chat completion said, as far as the parser has read. */
export interface ChatStreamState {
  /** Arrival time of each chunk whose choices[0].delta.content was non-empty: one token each. */
  tokenTimesMs: number[]
  /** The content pieces, in order: the assistant text actually received. */
  pieces: string[]
  /** The stream's last usage block. */
  usage: Usage | null
  /** An error event in the stream (the server's message). */
  error: string | null
  /** `data: [DONE]` was seen. */
  done: boolean
}

export interface ChatStreamParser {
  readonly state: ChatStreamState
  /** Feeds decoded text as it arrived (any split), with the time it arrived. */
  push(text: string, atMs: number): void
  /** The body ended: dispatches an event left without its blank line. */
  end(atMs: number): void
}

const contentKey = '"delta":{"content":"'
const roleOnly = '"delta":{"role":"assistant","content":""}'

/**
 * An incremental parser of OpenAI chat-completion SSE streams, cheap on the hot path.
 *
 * Lines are split as SSE says (`data:` fields, an event ends at a blank line, CR LF
 * allowed). A chunk in vLLM's shape, `..."delta":{"content":"..."}...`, is read without
 * JSON.parse: in valid JSON that key sequence (quotes and colons unescaped) can only be
 * structure, never inside a string, and so can `"usage":{` and `"error":`. Chunks that
 * carry usage or an error, and any chunk of another shape, are parsed in full, so other
 * servers' key orders and spacing are read correctly, only slower.
 */
export function createChatStreamParser(): ChatStreamParser {
  const state: ChatStreamState = {
    tokenTimesMs: [],
    pieces: [],
    usage: null,
    error: null,
    done: false,
  }
  let pending = ''
  let data: string | null = null

  const token = (piece: string, atMs: number) => {
    state.tokenTimesMs.push(atMs)
    state.pieces.push(piece)
  }

  const parseFully = (payload: string, atMs: number) => {
    let chunk: ChunkJson
    try {
      chunk = JSON.parse(payload) as ChunkJson
    } catch {
      state.error ??= `unparsable stream event: ${payload.slice(0, 200)}`
      return
    }
    if (chunk === null || typeof chunk !== 'object') return
    if (chunk.error !== undefined && chunk.error !== null) {
      const message =
        typeof chunk.error === 'object' ? (chunk.error.message ?? JSON.stringify(chunk.error)) : ''
      state.error ??= message || String(chunk.error)
    }
    const content = chunk.choices?.[0]?.delta?.content
    if (typeof content === 'string' && content.length > 0) token(content, atMs)
    state.usage = usageOf(chunk) ?? state.usage
  }

  const dispatch = (payload: string, atMs: number) => {
    if (payload === '[DONE]') {
      state.done = true
      return
    }
    if (payload.includes('"usage":{') || payload.includes('"error":')) {
      parseFully(payload, atMs)
      return
    }
    const at = payload.indexOf(contentKey)
    if (at >= 0) {
      const from = at + contentKey.length
      const to = endOfString(payload, from)
      if (to < 0) parseFully(payload, atMs)
      else if (to > from) {
        const raw = payload.slice(from, to)
        if (!raw.includes('\\')) token(raw, atMs)
        else parseFully(payload, atMs)
      }
      return
    }
    if (payload.includes(roleOnly)) return
    parseFully(payload, atMs)
  }

  const line = (text: string, atMs: number) => {
    if (text.length === 0) {
      if (data !== null) dispatch(data, atMs)
      data = null
      return
    }
    if (!text.startsWith('data:')) return
    const value = text.charCodeAt(5) === 32 ? text.slice(6) : text.slice(5)
    data = data === null ? value : `${data}\n${value}`
  }

  return {
    state,
    push(text, atMs) {
      const buffer = pending.length > 0 ? pending + text : text
      let from = 0
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n', from)) {
        const to = newline > from && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline
        line(buffer.slice(from, to), atMs)
        from = newline + 1
      }
      pending = from === 0 ? buffer : buffer.slice(from)
    },
    end(atMs) {
      if (pending.length > 0) line(pending.endsWith('\r') ? pending.slice(0, -1) : pending, atMs)
      pending = ''
      line('', atMs)
    },
  }
}

/** Index of the quote closing the JSON string that starts at `from`; -1 if not in `text`. */
function endOfString(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 34) return i
    if (code === 92) i++
  }
  return -1
}

interface ChunkJson {
  choices?: { delta?: { content?: unknown } }[]
  error?: { message?: string } | string | null
}
