import { describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import type { TokenizerOptionsInput } from '../../../control-plane/tokenizer/load-tokenizer.ts'
import type { VllmChatMessageInput } from '../../../control-plane/tokenizer/vllm-chat-message.ts'
import { createSeededRandom as seededRandom } from '../../../shared/random/create-seeded-random.ts'

const pieces = [
  'You are a helpful assistant. ',
  'Answer in one line.',
  ' the',
  ' model',
  'Hello',
  '\n',
  '\n\n',
  '  ',
  '\t',
  "don't",
  '3.14',
  '!?',
  '你好',
  'é',
  '😀',
  '\u0085',
  '<|im_start|>',
  '<|im_end|>',
  '<think>',
  '</think>',
  '<tool_call>',
]

function randomConversation(random: () => number, systemPrompts: string[]): VllmChatMessageInput[] {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T
  const text = () => Array.from({ length: Math.floor(random() * 10) }, () => pick(pieces)).join('')
  const messages: VllmChatMessageInput[] = [{ role: 'system', content: pick(systemPrompts) }]
  const turns = 1 + Math.floor(random() * 4)
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: 'user', content: text() })
    if (turn < turns - 1) messages.push({ role: 'assistant', content: text() })
  }
  return messages
}

describe('the segment cache', () => {
  it('gives the same ids as tokenizing without it, on many random conversations', () => {
    const random = seededRandom(7)
    const systemPrompts = Array.from({ length: 5 }, (_, i) =>
      `System prompt ${i}: ${'Be concise and cite sources. '.repeat(40 + i)}`.trim(),
    )
    const cached = createTokenizer('qwen3', { segmentCache: { maxEntries: 64 } })
    const uncached = createTokenizer('qwen3', { segmentCache: { maxEntries: 0 } })
    for (let i = 0; i < 500; i++) {
      const messages = randomConversation(random, systemPrompts)
      const options = { chatTemplateKwargs: { enable_thinking: random() < 0.5 } }
      const expected = uncached.applyChatTemplate(messages, options)
      const got = cached.applyChatTemplate(messages, options)
      expect(got).toEqual(expected)
      // And segments really are independent: the whole text encoded at once agrees.
      expect(cached.encode(got.text)).toEqual(expected.tokenIds)
    }
    const stats = cached.segmentCacheStats()
    expect(stats.hits).toBeGreaterThan(stats.misses)
    expect(stats.entries).toBeLessThanOrEqual(64)
    expect(uncached.segmentCacheStats()).toMatchObject({ entries: 0, hits: 0 })
  })

  it('encodes a shared system prompt once', () => {
    const tokenizer = createTokenizer('qwen3')
    const system = { role: 'system', content: 'Shared instructions. '.repeat(200) } as const
    tokenizer.applyChatTemplate([system, { role: 'user', content: 'first' }])
    const before = tokenizer.segmentCacheStats()
    tokenizer.applyChatTemplate([system, { role: 'user', content: 'second' }])
    const after = tokenizer.segmentCacheStats()
    // Segments: "system\n<prompt>", "\n", "user\nsecond", "\n", "assistant\n": only the
    // new user message is a miss.
    expect(after.misses - before.misses).toBe(1)
    expect(after.hits - before.hits).toBe(4)
  })

  it('keeps within its character budget', () => {
    const tokenizer = createTokenizer('qwen3', {
      segmentCache: { maxEntries: 100, maxChars: 1000 },
    })
    for (let i = 0; i < 50; i++) tokenizer.encode(`${i} `.repeat(30))
    expect(tokenizer.segmentCacheStats().weight).toBeLessThanOrEqual(1000)
    tokenizer.encode('x'.repeat(5000))
    expect(tokenizer.segmentCacheStats().weight).toBeLessThanOrEqual(1000)
  })

  it('refuses bad segment cache bounds', () => {
    const cases: [TokenizerOptionsInput, string][] = [
      [
        { segmentCache: { maxEntries: -1 } },
        'tokenizer: segmentCache.maxEntries must be a non-negative integer',
      ],
      [
        { segmentCache: { maxChars: 1.5 } },
        'tokenizer: segmentCache.maxChars must be a non-negative integer',
      ],
    ]
    for (const [options, message] of cases) {
      expect(() => createTokenizer('qwen3', options)).toThrow(
        expect.objectContaining({ code: 'invalid_config', message }),
      )
    }
  })
})
