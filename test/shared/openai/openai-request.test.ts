import { describe, expect, it } from 'vitest'
import {
  maxTokensField,
  maxTokensOf,
  parseOpenAiRequest,
} from '../../../shared/openai/openai-request.ts'

const parse = (kind: 'chat' | 'completion', body: object) => {
  const parsed = parseOpenAiRequest(kind, body)
  if ('issues' in parsed) throw new Error(parsed.issues.message)
  return parsed.request
}
const chat = { messages: [{ role: 'user', content: 'hi' }] }

describe('the OpenAI request model', () => {
  it('reads max tokens with OpenAI’s precedence: max_completion_tokens over max_tokens for chat', () => {
    expect(maxTokensOf(parse('chat', { ...chat, max_tokens: 10, max_completion_tokens: 20 }))).toBe(
      20,
    )
    expect(maxTokensOf(parse('chat', { ...chat, max_tokens: 10 }))).toBe(10)
    expect(maxTokensOf(parse('chat', chat))).toBeNull()
    expect(maxTokensField(parse('chat', { ...chat, max_completion_tokens: 5 }))).toBe(
      'max_completion_tokens',
    )
    // Completions have no max_completion_tokens: an unknown field, kept but not read.
    expect(
      maxTokensOf(parse('completion', { prompt: 'x', max_tokens: 7, max_completion_tokens: 9 })),
    ).toBe(7)
  })

  it.each([
    [{ tools: [{ type: 'function', function: 7 }] }, 'tools.0.function'],
    [{ tools: [{ type: 'web_search' }] }, 'tools.0.type'],
    [
      { tools: [{ type: 'function', function: { description: 'no name' } }] },
      'tools.0.function.name',
    ],
    [{ tools: 'all of them' }, 'tools'],
    [{ tool_choice: 'sometimes' }, 'tool_choice'],
  ])('refuses malformed tools at once, on every backend: %j', (fields, param) => {
    const bad = parseOpenAiRequest('chat', {
      messages: [{ role: 'user', content: 'x' }],
      ...fields,
    })
    if (!('issues' in bad)) throw new Error('expected issues')
    expect(bad.issues.param).toBe(param)
  })

  it('takes function tools as vLLM does (type defaults to function, unknown fields kept)', () => {
    const good = parseOpenAiRequest('chat', {
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ function: { name: 'f', parameters: { type: 'object' }, extra: 1 } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
    })
    if ('issues' in good) throw new Error(good.issues.message)
    if (good.request.kind !== 'chat') throw new Error('expected chat')
    const [tool] = good.request.body.tools ?? []
    expect(tool?.type).toBe('function')
    expect(tool?.function.extra).toBe(1)
  })

  it('answers a bad body with its issues and the first field at fault, not an exception', () => {
    const bad = parseOpenAiRequest('chat', { messages: [{ role: 'robot', content: 'x' }] })
    if (!('issues' in bad)) throw new Error('expected issues')
    expect(bad.issues.param).toBe('messages.0.role')
    expect(bad.issues.each.length).toBeGreaterThan(0)
    const empty = parseOpenAiRequest('completion', 'not an object')
    expect('issues' in empty && empty.issues.param).toBeNull()
  })

  it('words each problem as "field: problem", the field as JavaScript writes it', () => {
    const bad = parseOpenAiRequest('chat', {
      messages: [{ role: 'user', content: 5 }],
      n: 'two',
    })
    if (!('issues' in bad)) throw new Error('expected issues')
    expect(bad.issues.message).toContain('messages[0].content: Expected string, array or null')
    expect(bad.issues.message).toContain('n: Expected number, received string')
    expect(bad.issues.message).not.toMatch(/[✖→]|Invalid input/)
  })

  it('applies vLLM’s defaults for the chat template options', () => {
    const request = parse('chat', chat)
    if (request.kind !== 'chat') throw new Error('expected chat')
    expect(request.body.add_generation_prompt).toBe(true)
    expect(request.body.continue_final_message).toBe(false)
  })
})
