import { describe, expect, it } from 'vitest'
import { ChatCompletionChunk } from '../../../shared/bedrock/chat-completion.ts'
import { ConverseStreamEvent } from '../../../shared/bedrock/converse-stream-event.ts'
import { ConverseStreamTranslator } from '../../../shared/bedrock/converse-stream-translator.ts'

const identity = { id: 'chatcmpl-s', model: 'alias', created: 1 }

/** Text, then two tool calls (content blocks 1 and 2), as Bedrock streams them. */
const events = [
  { messageStart: { role: 'assistant' } },
  { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Let me ' }, p: 'abc' } },
  { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'check.' } } },
  { contentBlockStop: { contentBlockIndex: 0 } },
  {
    contentBlockStart: {
      contentBlockIndex: 1,
      start: { toolUse: { toolUseId: 't1', name: 'get_weather' } },
    },
  },
  { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } } },
  { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } } },
  { contentBlockStop: { contentBlockIndex: 1 } },
  {
    contentBlockStart: {
      contentBlockIndex: 2,
      start: { toolUse: { toolUseId: 't2', name: 'ping' } },
    },
  },
  { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: '{}' } } } },
  { contentBlockStop: { contentBlockIndex: 2 } },
  { messageStop: { stopReason: 'tool_use' } },
  {
    metadata: {
      usage: { inputTokens: 10, outputTokens: 6, cacheReadInputTokens: 5 },
      metrics: { latencyMs: 3 },
    },
  },
]

function run(includeUsage: boolean, input: unknown[] = events) {
  const translator = new ConverseStreamTranslator({ ...identity, includeUsage })
  const chunks = input.flatMap((event) => translator.translate(ConverseStreamEvent.parse(event)))
  for (const chunk of chunks) ChatCompletionChunk.parse(chunk)
  return { chunks, translator }
}

describe('ConverseStreamTranslator', () => {
  it("emits Envoy's order: role, text, tool start and arguments per tool, finish, no usage by default", () => {
    const { chunks, translator } = run(false)
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Let me ' }, null],
      [{ content: 'check.' }, null],
      [
        {
          tool_calls: [
            {
              index: 0,
              id: 't1',
              type: 'function',
              function: { name: 'get_weather', arguments: '' },
            },
          ],
        },
        null,
      ],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null],
      [
        {
          tool_calls: [
            { index: 1, id: 't2', type: 'function', function: { name: 'ping', arguments: '' } },
          ],
        },
        null,
      ],
      [{ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }, null],
      [{}, 'tool_calls'],
    ])
    expect(
      chunks.every(
        (c) => c.id === 'chatcmpl-s' && c.model === 'alias' && c.object === 'chat.completion.chunk',
      ),
    ).toBe(true)
    expect(chunks.every((c) => !('usage' in c))).toBe(true)
    expect(translator.stopReason).toBe('tool_use')
  })

  it('with include_usage: usage null on every chunk, then a last chunk with no choices and the usage', () => {
    const { chunks } = run(true)
    const last = chunks.at(-1)
    expect(last?.choices).toEqual([])
    expect(last?.usage).toEqual({
      prompt_tokens: 15,
      completion_tokens: 6,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 5 },
    })
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true)
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls')
  })

  it('sends the role first even when messageStart is missing, and maps reasoning', () => {
    const { chunks } = run(false, [
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { text: 'ok' } } },
      { messageStop: { stopReason: 'max_tokens' } },
    ])
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'hmm' },
      { content: 'ok' },
      {},
    ])
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length')
  })

  it('skips unknown events and refuses tool input without its start', () => {
    const translator = new ConverseStreamTranslator({ ...identity, includeUsage: false })
    expect(translator.translate(ConverseStreamEvent.parse({ somethingNew: {} }))).toEqual([])
    expect(() =>
      translator.translate(
        ConverseStreamEvent.parse({
          contentBlockDelta: { contentBlockIndex: 4, delta: { toolUse: { input: '{}' } } },
        }),
      ),
    ).toThrow(/tool input for content block 4 before its start/)
  })
})
