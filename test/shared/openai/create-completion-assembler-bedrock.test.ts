import { describe, expect, it } from 'vitest'
import { ConverseResponse } from '../../../shared/bedrock/converse-response.ts'
import { ConverseStreamEvent } from '../../../shared/bedrock/converse-stream-event.ts'
import { ConverseStreamTranslator } from '../../../shared/bedrock/converse-stream-translator.ts'
import { toChatCompletion } from '../../../shared/bedrock/to-chat-completion.ts'
import { createCompletionAssembler } from '../../../shared/openai/create-completion-assembler.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'

const identity = { id: 'chatcmpl-b', model: 'alias', created: 9 }
const usage = { inputTokens: 10, outputTokens: 6, cacheReadInputTokens: 5 }

/** One Bedrock reply, as Converse answers it and as ConverseStream sends it. */
const reply = {
  full: {
    output: {
      message: {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'Weather, so a tool.' } } },
          { text: 'Let me check.' },
          { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } },
        ],
      },
    },
    stopReason: 'tool_use',
    usage,
  },
  events: [
    { messageStart: { role: 'assistant' } },
    {
      contentBlockDelta: {
        contentBlockIndex: 0,
        delta: { reasoningContent: { text: 'Weather,' } },
      },
    },
    {
      contentBlockDelta: {
        contentBlockIndex: 0,
        delta: { reasoningContent: { text: ' so a tool.' } },
      },
    },
    { contentBlockDelta: { contentBlockIndex: 1, delta: { text: 'Let me ' } } },
    { contentBlockDelta: { contentBlockIndex: 1, delta: { text: 'check.' } } },
    {
      contentBlockStart: {
        contentBlockIndex: 2,
        start: { toolUse: { toolUseId: 't1', name: 'get_weather' } },
      },
    },
    { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } } },
    { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: '"Paris"}' } } } },
    { messageStop: { stopReason: 'tool_use' } },
    { metadata: { usage, metrics: { latencyMs: 3 } } },
  ],
}

describe('createCompletionAssembler on the provider path (Bedrock through ConverseStreamTranslator)', () => {
  it('gives what toChatCompletion makes of the unstreamed reply, plus vLLM’s null fields', () => {
    const translator = new ConverseStreamTranslator({ ...identity, includeUsage: true })
    const parsed = parseOpenAiRequest('chat', { messages: [{ role: 'user', content: 'Hi' }] })
    if ('issues' in parsed) throw new Error(parsed.issues.message)
    const assembler = createCompletionAssembler(parsed.request)
    for (const event of reply.events) {
      for (const chunk of translator.translate(ConverseStreamEvent.parse(event))) {
        expect(assembler.add(JSON.parse(JSON.stringify(chunk)))).toBe(true)
      }
    }
    const answer = assembler.result()
    if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
    const full = toChatCompletion(ConverseResponse.parse(reply.full), identity)
    expect(answer.body).toMatchObject(full)
    expect(answer.usage).toEqual(full.usage)
  })
})
