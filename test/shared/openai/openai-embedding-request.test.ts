import { describe, expect, it } from 'vitest'
import {
  embeddingInputs,
  estimateEmbeddingTokens,
  maxEmbeddingInputs,
  parseOpenAiEmbedding,
} from '../../../shared/openai/openai-embedding-request.ts'

const parsed = (body: unknown) => {
  const result = parseOpenAiEmbedding(body)
  if ('issues' in result) throw new Error(result.issues.message)
  return result.request
}

describe('parseOpenAiEmbedding', () => {
  it('takes each of OpenAI’s four input shapes, one input per item', () => {
    expect(embeddingInputs(parsed({ model: 'm', input: 'hello' }))).toEqual([{ text: 'hello' }])
    expect(embeddingInputs(parsed({ model: 'm', input: ['a', 'b'] }))).toEqual([
      { text: 'a' },
      { text: 'b' },
    ])
    expect(embeddingInputs(parsed({ model: 'm', input: [1, 2, 3] }))).toEqual([{ ids: [1, 2, 3] }])
    expect(embeddingInputs(parsed({ model: 'm', input: [[1], [2, 3]] }))).toEqual([
      { ids: [1] },
      { ids: [2, 3] },
    ])
  })

  it('keeps fields it does not know (vLLM’s own go to the pods as sent)', () => {
    expect(parsed({ model: 'm', input: 'x', truncate_prompt_tokens: 8 })).toMatchObject({
      truncate_prompt_tokens: 8,
    })
  })

  it.each([
    [{ input: 'x' }, 'model'],
    [{ model: 'm' }, 'input'],
    [{ model: 'm', input: '' }, 'input'],
    [{ model: 'm', input: [] }, 'input'],
    [{ model: 'm', input: ['a', 1] }, 'input'],
    [{ model: 'm', input: [[]] }, 'input'],
    [{ model: 'm', input: [-1] }, 'input'],
    [{ model: 'm', input: Array(maxEmbeddingInputs + 1).fill('a') }, 'input'],
    [{ model: 'm', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    [{ model: 'm', input: 'x', dimensions: 0 }, 'dimensions'],
  ])('refuses %j, naming %s in words', (body, param) => {
    const result = parseOpenAiEmbedding(body)
    if (!('issues' in result)) throw new Error('accepted')
    // The item at fault when one is (input.0), else the field.
    expect(result.issues.param?.split('.')[0]).toBe(param)
    expect(result.issues.message).toMatch(new RegExp(`^${param}(\\[\\d+\\])?: `))
    expect(result.issues.message).not.toMatch(/✖|→|Invalid input/)
  })
})

describe('estimateEmbeddingTokens', () => {
  it('counts token ids exactly and estimates texts', () => {
    expect(estimateEmbeddingTokens([{ ids: [1, 2, 3] }, { ids: [4] }])).toBe(4)
    const text = estimateEmbeddingTokens([{ text: 'the quick brown fox jumps over the lazy dog' }])
    expect(text).toBeGreaterThan(5)
    expect(text).toBeLessThan(20)
  })
})
