import { describe, expect, it } from 'vitest'
import { ConverseRequest } from '../../../shared/bedrock/converse-request.ts'
import { toConverseRequest } from '../../../shared/bedrock/to-converse-request.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { ChatCompletionRequest } from '../../../shared/openai/chat-completion-request.ts'

const model = { modelId: 'anthropic.claude-test' }
const convert = (
  body: Record<string, unknown>,
  target: typeof model & { maxOutputTokens?: number } = model,
) => toConverseRequest(ChatCompletionRequest.parse({ model: 'm', ...body }), target)

function rejection(body: Record<string, unknown>): KinfError {
  try {
    convert(body)
  } catch (error) {
    if (KinfError.isInstance(error)) return error
    throw error
  }
  throw new Error('expected an invalid_request rejection')
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}

describe('toConverseRequest', () => {
  it('moves system and developer messages to system and keeps user text', () => {
    const converse = convert({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'Hello' },
      ],
    })
    expect(converse).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Answer in English.' }],
      messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
    })
    expect(ConverseRequest.parse(converse)).toEqual(converse)
  })

  it('merges consecutive messages of one role so roles alternate', () => {
    const converse = convert({
      messages: [
        { role: 'user', content: 'one' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'two' },
            { type: 'text', text: '' },
          ],
        },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: 'four' },
        { role: 'user', content: 'five' },
      ],
    })
    expect(converse.messages).toEqual([
      { role: 'user', content: [{ text: 'one' }, { text: 'two' }] },
      { role: 'assistant', content: [{ text: 'three' }, { text: 'four' }] },
      { role: 'user', content: [{ text: 'five' }] },
    ])
  })

  it('maps a tool round trip: tools, tool_calls to toolUse, tool results to user toolResult', () => {
    const converse = convert({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: '' },
      ],
      tools: [weatherTool],
      tool_choice: 'auto',
    })
    expect(converse.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'call_2', name: 'get_weather', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ text: 'sunny' }] } },
          { toolResult: { toolUseId: 'call_2', content: [{ json: {} }] } },
        ],
      },
    ])
    expect(converse.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'Weather for a city',
            inputSchema: { json: weatherTool.function.parameters },
          },
        },
      ],
      toolChoice: { auto: {} },
    })
  })

  it('maps every tool_choice; none drops toolConfig', () => {
    const withChoice = (tool_choice: unknown) =>
      convert({ messages: [{ role: 'user', content: 'x' }], tools: [weatherTool], tool_choice })
        .toolConfig
    expect(withChoice('required')?.toolChoice).toEqual({ any: {} })
    expect(withChoice({ type: 'function', function: { name: 'get_weather' } })?.toolChoice).toEqual(
      {
        tool: { name: 'get_weather' },
      },
    )
    expect(withChoice(undefined)?.toolChoice).toBeUndefined()
    expect(withChoice('none')).toBeUndefined()
    const noParameters = convert({
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'ping' } }],
    })
    expect(noParameters.toolConfig?.tools[0]?.toolSpec.inputSchema).toEqual({
      json: { type: 'object', properties: {} },
    })
  })

  it('maps sampling fields and caps max tokens at the provider model', () => {
    const converse = convert(
      {
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 5000,
        temperature: 0.2,
        top_p: 0.9,
        stop: 'END',
      },
      { ...model, maxOutputTokens: 1024 },
    )
    expect(converse.inferenceConfig).toEqual({
      maxTokens: 1024,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END'],
    })
    expect(
      convert({
        messages: [{ role: 'user', content: 'x' }],
        max_completion_tokens: 10,
        max_tokens: 99,
        stop: ['a', 'b'],
      }).inferenceConfig,
    ).toEqual({ maxTokens: 10, stopSequences: ['a', 'b'] })
    expect(
      convert({ messages: [{ role: 'user', content: 'x' }] }, { ...model, maxOutputTokens: 256 })
        .inferenceConfig,
    ).toEqual({ maxTokens: 256 })
    expect(convert({ messages: [{ role: 'user', content: 'x' }] }).inferenceConfig).toBeUndefined()
  })

  it('turns data: image URLs into image blocks', () => {
    const converse = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    })
    expect(converse.messages[0]?.content).toEqual([
      { text: 'What is this?' },
      { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
    ])
  })

  it.each([
    [{ n: 2 }, /^n is not supported on this backend/],
    [{ logprobs: true }, /^logprobs is not supported/],
    [{ top_logprobs: 3 }, /^top_logprobs is not supported/],
    [{ seed: 7 }, /^seed is not supported/],
    [
      { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } },
      /^response_format is not supported/,
    ],
    [{ response_format: { type: 'json_object' } }, /^response_format is not supported/],
    [{ presence_penalty: 0.5 }, /^presence_penalty is not supported/],
    [{ functions: [] }, /^functions is not supported/],
    [{ max_tokens: 0 }, /^max_tokens must be at least 1/],
    [{ stop: [''] }, /^stop: stop sequences must not be empty/],
    [{ tool_choice: 'required' }, /^tool_choice asks for a tool but no tools were given/],
    [
      { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } },
      /names nope/,
    ],
  ])('refuses %j with a clear invalid_request', (fields, message) => {
    const error = rejection({ messages: [{ role: 'user', content: 'x' }], ...fields })
    expect(error.code).toBe('invalid_request')
    expect(error.status).toBe(400)
    expect(error.message).toMatch(message)
  })

  it('accepts what it can honour: n=1, logprobs false, response_format text, zero penalties', () => {
    expect(() =>
      convert({
        messages: [{ role: 'user', content: 'x' }],
        n: 1,
        logprobs: false,
        response_format: { type: 'text' },
        presence_penalty: 0,
        frequency_penalty: 0,
      }),
    ).not.toThrow()
  })

  it.each([
    [
      [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }],
        },
      ],
      /messages\[0\]\.content\[0\]: this backend \(Bedrock\) takes images only as base64 data: URLs/,
    ],
    [
      [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }],
        },
      ],
      /image type image\/tiff is not supported/,
    ],
    [
      [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } }],
        },
      ],
      /base64 data is malformed/,
    ],
    [
      [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }],
      /input_audio parts are not supported/,
    ],
    [
      [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{bad' } }],
        },
      ],
      /^messages\[1\]\.tool_calls\[0\]\.function\.arguments is not valid JSON/,
    ],
    [
      [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }],
        },
      ],
      /arguments must be a JSON object/,
    ],
    [
      [
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ id: 'c' }] },
      ],
      /needs id, function\.name/,
    ],
    [
      [
        { role: 'user', content: 'x' },
        { role: 'tool', content: 'r' },
      ],
      /messages\[1\]: a tool message needs tool_call_id/,
    ],
    [[{ role: 'user', content: '' }], /messages\[0\]: a user message with no content/],
    [
      [{ role: 'system', content: 'only a system prompt' }],
      /at least one user message is required/,
    ],
    [
      [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] }],
      /takes text parts only/,
    ],
  ])('refuses bad messages %#', (messages, message) => {
    const error = rejection({ messages })
    expect(error.code).toBe('invalid_request')
    expect(error.message).toMatch(message)
  })
})
