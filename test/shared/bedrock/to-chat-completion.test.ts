import { describe, expect, it } from 'vitest'
import { ChatCompletion } from '../../../shared/bedrock/chat-completion.ts'
import { ConverseResponse } from '../../../shared/bedrock/converse-response.ts'
import {
  chatUsageOf,
  finishReasonOf,
  isMalformedStop,
  toChatCompletion,
} from '../../../shared/bedrock/to-chat-completion.ts'

const identity = { id: 'chatcmpl-req-1', model: 'claude-alias', created: 1_700_000_000 }

describe('finishReasonOf', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['content_filtered', 'content_filter'],
    ['guardrail_intervened', 'content_filter'],
    ['model_context_window_exceeded', 'length'],
    ['malformed_model_output', 'stop'],
    ['malformed_tool_use', 'stop'],
    ['some_future_reason', 'stop'],
  ])('%s -> %s', (stopReason, finishReason) => {
    expect(finishReasonOf(stopReason)).toBe(finishReason)
  })

  it('flags malformed and unknown stops for a log line, not the normal ones', () => {
    expect(isMalformedStop('malformed_tool_use')).toBe(true)
    expect(isMalformedStop('some_future_reason')).toBe(true)
    expect(isMalformedStop('end_turn')).toBe(false)
    expect(isMalformedStop('model_context_window_exceeded')).toBe(false)
  })
})

describe('chatUsageOf', () => {
  it('counts cache reads and writes as prompt tokens and reports reads as cached', () => {
    expect(
      chatUsageOf({
        inputTokens: 10,
        outputTokens: 5,
        totalTokens: 115,
        cacheReadInputTokens: 80,
        cacheWriteInputTokens: 20,
      }),
    ).toEqual({
      prompt_tokens: 110,
      completion_tokens: 5,
      total_tokens: 115,
      prompt_tokens_details: { cached_tokens: 80 },
    })
    expect(chatUsageOf({ inputTokens: 3, outputTokens: 4 })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 0 },
    })
  })
})

describe('toChatCompletion', () => {
  it('maps text, reasoning, usage and the requested model name', () => {
    const response = ConverseResponse.parse({
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'thinking', signature: 's' } } },
            { text: 'Hello ' },
            { text: 'world' },
          ],
        },
      },
      stopReason: 'end_turn',
      usage: { inputTokens: 7, outputTokens: 2, totalTokens: 9, cacheReadInputTokens: 4 },
      metrics: { latencyMs: 12 },
    })
    const completion = toChatCompletion(response, identity)
    expect(ChatCompletion.parse(completion)).toEqual(completion)
    expect(completion).toEqual({
      id: 'chatcmpl-req-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-alias',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello world', reasoning_content: 'thinking' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 11,
        completion_tokens: 2,
        total_tokens: 13,
        prompt_tokens_details: { cached_tokens: 4 },
      },
    })
  })

  it('maps tool uses to tool_calls with JSON arguments and content null', () => {
    const completion = toChatCompletion(
      ConverseResponse.parse({
        output: {
          message: {
            role: 'assistant',
            content: [
              {
                toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } },
              },
              { toolUse: { toolUseId: 'tooluse_2', name: 'ping', input: {} } },
            ],
          },
        },
        stopReason: 'tool_use',
        usage: { inputTokens: 1, outputTokens: 1 },
      }),
      identity,
    )
    expect(completion.choices[0]?.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'tooluse_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
        { id: 'tooluse_2', type: 'function', function: { name: 'ping', arguments: '{}' } },
      ],
    })
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls')
  })

  it('answers an empty reply with empty content, not null', () => {
    const completion = toChatCompletion(
      ConverseResponse.parse({
        output: { message: { role: 'assistant', content: [] } },
        stopReason: 'content_filtered',
        usage: { inputTokens: 1, outputTokens: 0 },
      }),
      identity,
    )
    expect(completion.choices[0]?.message.content).toBe('')
    expect(completion.choices[0]?.finish_reason).toBe('content_filter')
  })
})
