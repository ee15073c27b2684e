import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import {
  chatBodyOf,
  inputMessages,
  parseResponsesRequest,
} from '../../../../shared/openai/responses/responses-request.ts'

describe('a Responses request as a chat completions body', () => {
  it('puts the instructions first, then the stored conversation, then the input', () => {
    const request = parseResponsesRequest({
      model: 'm',
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use metric units.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'How far ' },
            { type: 'input_text', text: 'is it?' },
          ],
        },
      ],
      max_output_tokens: 32,
      stream: true,
      tools: [{ type: 'function', name: 'distance', parameters: { type: 'object' } }],
      tool_choice: { type: 'function', name: 'distance' },
    })
    const previous = {
      model: 'm',
      messages: [
        { role: 'user' as const, content: 'Hi' },
        { role: 'assistant' as const, content: 'Hello' },
      ],
    }
    const body = chatBodyOf(request, previous, inputMessages(request.input))
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'system', content: 'Use metric units.' },
      { role: 'user', content: 'How far is it?' },
    ])
    expect(body).toMatchObject({
      max_tokens: 32,
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'distance', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'distance' } },
    })
  })

  it('turns function calls and their outputs into one assistant turn and tool messages', () => {
    const messages = inputMessages([
      { type: 'function_call', call_id: 'c1', name: 'a', arguments: '{}' },
      { type: 'function_call', call_id: 'c2', name: 'b', arguments: '{"x":1}' },
      { type: 'function_call_output', call_id: 'c1', output: '1' },
      { type: 'function_call_output', call_id: 'c2', output: '2' },
    ] as never)
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '1' },
      { role: 'tool', tool_call_id: 'c2', content: '2' },
    ])
  })

  it('refuses what it cannot serve by name, with the field at fault', () => {
    const refused = (body: unknown) => {
      try {
        inputMessages(parseResponsesRequest(body).input)
      } catch (error) {
        if (KinfError.isInstance(error))
          return { status: error.status, param: error.param, message: error.message }
        throw error
      }
      return null
    }
    expect(refused({ model: 'm', input: 'x', tools: [{ type: 'web_search' }] })).toMatchObject({
      status: 400,
      param: 'tools.0',
    })
    expect(refused({ model: 'm', input: 'x', background: true })).toMatchObject({
      param: 'background',
    })
    expect(
      refused({
        model: 'm',
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }],
      }),
    ).toMatchObject({ status: 400 })
    expect(refused({ input: 'x' })).toMatchObject({ status: 400, param: 'model' })
    expect(refused({ model: 'm', input: 'x' })).toBeNull()
  })
})
