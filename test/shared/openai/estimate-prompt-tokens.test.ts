import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { estimatePromptTokens } from '../../../shared/openai/estimate-prompt-tokens.ts'

describe('estimatePromptTokens', () => {
  const qwen3 = createTokenizer('qwen3')
  const ratio = (text: string) => estimatePromptTokens(text) / qwen3.encode(text).length

  it('lands within 15% of Qwen3’s count on prose, Markdown and code', () => {
    expect(ratio(readFileSync('README.md', 'utf8'))).toBeGreaterThan(0.85)
    expect(ratio(readFileSync('README.md', 'utf8'))).toBeLessThan(1.15)
    const code = readFileSync('control-plane/scorer/serving/handle-inference.ts', 'utf8')
    expect(ratio(code)).toBeGreaterThan(0.85)
    expect(ratio(code)).toBeLessThan(1.15)
  })

  it('counts digits one by one, as Qwen3 does', () => {
    expect(estimatePromptTokens('4111111111111111')).toBe(qwen3.encode('4111111111111111').length)
  })

  it('is 0 for nothing and grows with the text', () => {
    expect(estimatePromptTokens('')).toBe(0)
    expect(estimatePromptTokens('hello world')).toBe(2)
    expect(estimatePromptTokens('x'.repeat(40_000))).toBeGreaterThan(5_000)
  })
})
