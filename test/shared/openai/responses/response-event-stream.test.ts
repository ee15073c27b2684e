import { describe, expect, it } from 'vitest'
import { parseOpenAiRequest } from '../../../../shared/openai/openai-request.ts'
import {
  ResponseEventStream,
  sseDataEvents,
} from '../../../../shared/openai/responses/response-event-stream.ts'
import { parseResponsesRequest } from '../../../../shared/openai/responses/responses-request.ts'

function stream() {
  const request = parseResponsesRequest({ model: 'm', input: 'hi', stream: true })
  let n = 0
  const frame = { id: 'resp_1', createdAt: 1, request, newItemId: (p: string) => `${p}_${++n}` }
  const chat = parseOpenAiRequest('chat', {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  })
  if ('issues' in chat) throw new Error(chat.issues.message)
  return new ResponseEventStream(frame, chat.request)
}

const chunk = (delta: object, finish: string | null = null, usage?: object) => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...(usage && { usage }),
})

function events(text: string) {
  const [payloads] = sseDataEvents(text)
  return payloads.map(
    (payload) => JSON.parse(payload) as Record<string, unknown> & { type: string },
  )
}

describe('ResponseEventStream', () => {
  it('streams text and a tool call as Responses events, numbered, ending in the assembled response', () => {
    const s = stream()
    let out = s.start()
    out += s.chunk(chunk({ role: 'assistant', content: '' }))
    out += s.chunk(chunk({ content: 'Hel' }))
    out += s.chunk(chunk({ content: 'lo' }))
    out += s.chunk(
      chunk({
        tool_calls: [
          { index: 0, id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"a"' } },
        ],
      }),
    )
    out += s.chunk(
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls'),
    )
    out += s.chunk({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    })
    const ended = s.end()
    const all = events(out + ended.events)
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i))
    expect(all.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    const completed = all.at(-1)?.response as {
      output: { id: string; type: string }[]
      usage: object
    }
    // The final items carry the ids their deltas used.
    expect(completed.output.map((item) => item.id)).toEqual(['msg_1', 'fc_2'])
    expect(completed.output[1]).toMatchObject({
      call_id: 'call_9',
      name: 'f',
      arguments: '{"a":1}',
    })
    expect(completed.usage).toEqual({
      input_tokens: 5,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 8,
    })
    expect(ended.assistant).toMatchObject({ role: 'assistant', content: 'Hello' })
  })

  it('ends a stream the upstream broke off with error and response.failed, storing nothing', () => {
    const s = stream()
    s.start()
    s.chunk(chunk({ content: 'Hel' }))
    s.chunk({
      error: { message: 'the pod failed mid-stream', type: 'server_error', code: 'upstream_error' },
    })
    const ended = s.end()
    expect(events(ended.events).map((e) => e.type)).toEqual(['error', 'response.failed'])
    expect(ended.assistant).toBeNull()
  })

  it('splits SSE text into data payloads, keeping an unfinished event', () => {
    expect(sseDataEvents('data: {"a":1}\n\ndata: [DONE]\n\ndata: {"b"')).toEqual([
      ['{"a":1}', '[DONE]'],
      'data: {"b"',
    ])
  })
})
