import type { FakeReply } from './plan-fake-reply.ts'

/** One event of ConverseStreamOutput: its `:event-type` and JSON payload. */
export interface FakeStreamEvent {
  type: string
  payload: Record<string, unknown>
  /** Sending it needs one more output token generated (a word; a tool call's start). */
  token?: true
}

/** The reply as Converse's JSON body (the non-streaming answer). */
export function fakeConverseResponse(reply: FakeReply, latencyMs: number): Record<string, unknown> {
  return {
    output: {
      message: {
        role: 'assistant',
        content: reply.blocks.map((block) =>
          block.kind === 'text'
            ? { text: block.words.join(' ') }
            : { toolUse: { toolUseId: block.toolUseId, name: block.name, input: block.input } },
        ),
      },
    },
    stopReason: reply.stopReason,
    usage: reply.usage,
    metrics: { latencyMs },
  }
}

/** Split a string into `parts` roughly equal fragments (tool input arrives in pieces). */
function fragments(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts))
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/**
 * The reply as ConverseStream events, in Bedrock's order: messageStart; per content block
 * (a tool block opens with contentBlockStart, a text block does not) its deltas, one word
 * each, then contentBlockStop (the tool call's one output token is its start); messageStop; metadata last. Real Bedrock pads payloads with
 * a `p` field of varying length; so does this, so readers must ignore unknown fields.
 */
export function fakeStreamEvents(reply: FakeReply, latencyMs: number): FakeStreamEvent[] {
  const events: FakeStreamEvent[] = [{ type: 'messageStart', payload: { role: 'assistant' } }]
  reply.blocks.forEach((block, contentBlockIndex) => {
    if (block.kind === 'text') {
      block.words.forEach((word, i) => {
        const text = i === 0 ? word : ` ${word}`
        events.push({
          type: 'contentBlockDelta',
          payload: { contentBlockIndex, delta: { text } },
          token: true,
        })
      })
    } else {
      events.push({
        type: 'contentBlockStart',
        payload: {
          contentBlockIndex,
          start: { toolUse: { toolUseId: block.toolUseId, name: block.name } },
        },
        token: true,
      })
      for (const input of fragments(JSON.stringify(block.input), 3)) {
        events.push({
          type: 'contentBlockDelta',
          payload: { contentBlockIndex, delta: { toolUse: { input } } },
        })
      }
    }
    events.push({ type: 'contentBlockStop', payload: { contentBlockIndex } })
  })
  events.push({ type: 'messageStop', payload: { stopReason: reply.stopReason } })
  events.push({ type: 'metadata', payload: { usage: reply.usage, metrics: { latencyMs } } })
  return events.map((event, i) => ({
    ...event,
    payload: { ...event.payload, p: 'abcdefghijklmnopqrstuvwxyz'.slice(0, (i * 7) % 27) },
  }))
}
