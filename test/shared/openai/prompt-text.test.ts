import { describe, expect, it } from 'vitest'
import {
  ChatCompletionRequest,
  CompletionRequest,
} from '../../../shared/openai/chat-completion-request.ts'
import { promptText } from '../../../shared/openai/prompt-text.ts'

describe('promptText', () => {
  it('gathers contents, text parts, names and tool-call arguments, one per line', () => {
    const request = ChatCompletionRequest.parse({
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          name: 'ann',
          content: [{ type: 'text', text: 'card 4111' }, { type: 'image_url' }],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 't', type: 'function', function: { name: 'f', arguments: '{"ssn":"1"}' } },
          ],
        },
      ],
    })
    expect(promptText({ kind: 'chat', body: request })).toBe(
      'be brief\nann\ncard 4111\n{"ssn":"1"}',
    )
  })

  it('takes a completions prompt as given, and nothing from token ids', () => {
    expect(
      promptText({ kind: 'completion', body: CompletionRequest.parse({ prompt: 'abc' }) }),
    ).toBe('abc')
    expect(
      promptText({ kind: 'completion', body: CompletionRequest.parse({ prompt: [1, 2] }) }),
    ).toBe('')
  })
})
