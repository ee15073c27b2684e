import { describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { promptIds } from '../../../control-plane/tokenizer/prompt-ids.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { type OpenAiRequest, parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'

const tokenizer = createTokenizer('qwen3')

function request(kind: 'chat' | 'completion', body: object): OpenAiRequest {
  const parsed = parseOpenAiRequest(kind, body)
  if ('issues' in parsed) throw new Error(parsed.issues.message)
  return parsed.request
}

const thrown = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected an error')
}

const haiku = [
  { role: 'user', content: 'Write a haiku.' },
  { role: 'assistant', content: 'Autumn moon  ' },
]

describe('promptIds', () => {
  it('renders chat as vLLM does by default: a new assistant turn opened', () => {
    const ids = promptIds(tokenizer, request('chat', { messages: haiku.slice(0, 1) }))
    expect(tokenizer.decode(ids)).toBe(
      '<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\n',
    )
    const closed = promptIds(
      tokenizer,
      request('chat', { messages: haiku.slice(0, 1), add_generation_prompt: false }),
    )
    expect(tokenizer.decode(closed)).toBe('<|im_start|>user\nWrite a haiku.<|im_end|>\n')
  })

  it('continues the final message as transformers does: cut where its content ends', () => {
    const body = { messages: haiku, add_generation_prompt: false, continue_final_message: true }
    const text = tokenizer.decode(promptIds(tokenizer, request('chat', body)))
    // transformers (PR #40732, the releases vLLM takes) marks the end of the final content
    // and cuts there: its trailing spaces stay, the end of turn goes.
    expect(text.endsWith('\n\nAutumn moon  ')).toBe(true)
    expect(text).not.toContain(
      '<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nAutumn moon<',
    )
    const full = tokenizer.decode(
      promptIds(tokenizer, request('chat', { messages: haiku, add_generation_prompt: false })),
    )
    expect(full.startsWith(text)).toBe(true)
    expect(full.slice(text.length)).toBe('<|im_end|>\n')
    // A user message can be continued too (vLLM allows it): the turn stays open.
    const user = [{ role: 'user', content: 'Complete: the quick brown' }]
    const open = promptIds(
      tokenizer,
      request('chat', {
        messages: user,
        add_generation_prompt: false,
        continue_final_message: true,
      }),
    )
    expect(tokenizer.decode(open)).toBe('<|im_start|>user\nComplete: the quick brown')
  })

  it('refuses continue_final_message with a generation prompt, as vLLM does, naming the field', () => {
    for (const body of [
      { messages: haiku, continue_final_message: true },
      { messages: haiku, continue_final_message: true, add_generation_prompt: true },
    ]) {
      const error = thrown(() => promptIds(tokenizer, request('chat', body)))
      expect(KinfError.isInstance(error) && [error.code, error.param]).toEqual([
        'invalid_request',
        'continue_final_message',
      ])
      expect(String(error)).toContain('Cannot set both `continue_final_message`')
    }
    expect(
      'issues' in parseOpenAiRequest('chat', { messages: haiku, continue_final_message: null }),
    ).toBe(true)
  })

  it('tokenizes a completions prompt, or takes its ids, refusing ids past the vocabulary', () => {
    expect(promptIds(tokenizer, request('completion', { prompt: 'hello world' }))).toEqual(
      tokenizer.encode('hello world'),
    )
    expect(promptIds(tokenizer, request('completion', { prompt: [1, 2, 3] }))).toEqual([1, 2, 3])
    const error = thrown(() =>
      promptIds(tokenizer, request('completion', { prompt: [1, tokenizer.vocabSize] })),
    )
    expect(KinfError.isInstance(error) && error.param).toBe('prompt')
  })
})
