import { describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import type { VllmChatMessageInput } from '../../../control-plane/tokenizer/vllm-chat-message.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

const tokenizer = createTokenizer('qwen3')

function render(messages: VllmChatMessageInput[], options = {}): string {
  return tokenizer.applyChatTemplate(messages, options).text
}

function invalidRequest(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(KinfError)
    expect((error as KinfError).code).toBe('invalid_request')
    return (error as KinfError).message
  }
  throw new Error('expected a KinfError')
}

describe('applyChatTemplate', () => {
  it('renders system and user turns and opens the assistant turn', () => {
    const { text, tokenIds } = tokenizer.applyChatTemplate([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hi' },
    ])
    expect(text).toBe(
      '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    )
    const [imStart, imEnd, newline] = tokenizer.encode('<|im_start|><|im_end|>\n')
    expect(tokenIds).toEqual([
      imStart,
      ...tokenizer.encode('system\nYou are terse.'),
      imEnd,
      newline,
      imStart,
      ...tokenizer.encode('user\nHi'),
      imEnd,
      newline,
      imStart,
      ...tokenizer.encode('assistant\n'),
    ])
    expect(tokenIds).toEqual(tokenizer.encode(text))
  })

  it('renders assistant history without its thinking and honours add_generation_prompt', () => {
    const messages: VllmChatMessageInput[] = [
      { role: 'user', content: 'Q1' },
      { role: 'assistant', content: '<think>\nlet me see\n</think>\n\nA1' },
      { role: 'user', content: 'Q2' },
      { role: 'assistant', content: 'A2' },
    ]
    expect(render(messages, { addGenerationPrompt: false })).toBe(
      '<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n' +
        // The last assistant turn, after the last user turn, keeps an (empty) think block.
        '<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nA2<|im_end|>\n',
    )
    expect(render(messages.slice(0, 3))).toBe(
      '<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n' +
        '<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n',
    )
  })

  it('adds an empty think block to the generation prompt when thinking is off', () => {
    const messages: VllmChatMessageInput[] = [{ role: 'user', content: 'Hi' }]
    const off = { chatTemplateKwargs: { enable_thinking: false } }
    expect(render(messages, off)).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    )
    expect(render(messages, { chatTemplateKwargs: { enable_thinking: true } })).toBe(
      render(messages),
    )
    // vLLM merges the request's own add_generation_prompt over chat_template_kwargs
    // (ChatCompletionRequest.build_chat_params): the kwargs' one changes nothing.
    expect(render(messages, { chatTemplateKwargs: { add_generation_prompt: false } })).toBe(
      render(messages),
    )
    expect(
      render(messages, {
        addGenerationPrompt: false,
        chatTemplateKwargs: { add_generation_prompt: true },
      }),
    ).toBe('<|im_start|>user\nHi<|im_end|>\n')
  })

  it('joins text parts with "\\n" and keeps leading spaces that Python lstrip("\\n") keeps', () => {
    expect(
      render([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'assistant', content: '<think>x</think>\n \tkept' },
      ]),
    ).toBe(
      '<|im_start|>user\na\nb<|im_end|>\n<|im_start|>assistant\n<think>\nx\n</think>\n\n \tkept<|im_end|>\n<|im_start|>assistant\n',
    )
  })

  it('skips an empty text part when joining, as vLLM skips a falsy part', () => {
    const parts = ['a', '', 'b'].map((text) => ({ type: 'text' as const, text }))
    expect(render([{ role: 'user', content: parts }])).toBe(
      render([{ role: 'user', content: 'a\nb' }]),
    )
  })

  it('renders tool calls with arguments printed as vLLM and transformers print them', () => {
    const text = render([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Zürich","days":2.0,"opts":{}}' },
          },
        ],
      },
      { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
      { role: 'tool', content: [{ type: 'text', text: 'warm' }], tool_call_id: 'call_1' },
    ])
    expect(text).toBe(
      '<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n' +
        '{"name": "get_weather", "arguments": {"city": "Zürich", "days": 2.0, "opts": {}}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\nwarm\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n',
    )
  })

  it('puts vLLM "reasoning" back into the template of an in-progress tool loop', () => {
    const text = render([
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: '',
        reasoning: '\nplan\n',
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: 'not json' } }],
      },
      { role: 'tool', content: 'done' },
    ])
    expect(text).toBe(
      '<|im_start|>user\nGo<|im_end|>\n<|im_start|>assistant\n<think>\nplan\n</think>\n\n<tool_call>\n' +
        '{"name": "f", "arguments": {}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\ndone\n' +
        '</tool_response><|im_end|>\n<|im_start|>assistant\n',
    )
  })

  it('rejects what vLLM rejects or Qwen3 cannot take, with invalid_request', () => {
    expect(
      invalidRequest(() => tokenizer.applyChatTemplate([{ role: 'user', content: 42 }] as never)),
    ).toBe(
      'messages[0].content: expected a string or an array of text parts ({"type": "text", "text": string}) or image parts',
    )
    expect(invalidRequest(() => tokenizer.applyChatTemplate([{ content: 'x' }] as never))).toBe(
      'messages[0].role: a message needs a string "role"',
    )
    expect(invalidRequest(() => tokenizer.applyChatTemplate([]))).toMatch(/must not be empty/)
    expect(invalidRequest(() => tokenizer.applyChatTemplate('hi' as never))).toMatch(
      /must be an array/,
    )
    expect(
      invalidRequest(() =>
        tokenizer.applyChatTemplate([
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] } as never,
        ]),
      ),
    ).toMatch(/^messages\[0\]\.content: /)
    expect(
      invalidRequest(() =>
        tokenizer.applyChatTemplate([{ role: 'user', content: [{ type: 'text' }] } as never]),
      ),
    ).toMatch(/^messages\[0\]\.content: /)
    expect(
      invalidRequest(() =>
        tokenizer.applyChatTemplate([{ role: 'user', content: 'x' }], {
          chatTemplateKwargs: { messages: [] },
        }),
      ),
    ).toMatch(/cannot set "messages"/)
  })

  it('drops the fields vLLM ignores, such as those echoed back from a response', () => {
    const echoed = { role: 'assistant', content: 'A', refusal: null, annotations: [] } as const
    expect(
      render([{ role: 'user', content: 'Q' }, echoed as never, { role: 'user', content: 'R' }]),
    ).toBe(
      render([
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: 'A' },
        { role: 'user', content: 'R' },
      ]),
    )
  })
})

describe('roles and contents vLLM accepts', () => {
  it('takes a role of the client’s own (vLLM’s custom message) and a missing content as ""', () => {
    // Qwen3's template renders no turn for a role it does not know.
    expect(
      render([
        { role: 'user', content: 'ok' },
        { role: 'wizard', content: 'x' },
      ]),
    ).toBe(render([{ role: 'user', content: 'ok' }]))
    expect(render([{ role: 'user' }])).toBe(render([{ role: 'user', content: '' }]))
    expect(render([{ role: 'user', content: null }])).toBe(render([{ role: 'user', content: '' }]))
  })
})

describe('developer messages', () => {
  it('are accepted, as vLLM accepts them, and Qwen3’s template renders nothing for them', () => {
    const tokenizer = createTokenizer('qwen3')
    const withDeveloper = tokenizer.applyChatTemplate([
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ])
    expect(withDeveloper.text).toBe(
      tokenizer.applyChatTemplate([{ role: 'user', content: 'Hi' }]).text,
    )
  })
})
