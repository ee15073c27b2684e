import { describe, expect, it } from 'vitest'
import { loadSimModel } from '../../../control-plane/lab/sim/model/create-sim-model.ts'
import { createSeededRandom as seededRandom } from '../../../shared/random/create-seeded-random.ts'
import { createStableVocabulary } from '../../../shared/tokens/create-stable-vocabulary.ts'

// The simulator's Qwen3 model: the vocabulary is what simulated pods answer with.
const loaded = loadSimModel('qwen3')
if (!loaded.ok) throw loaded.error
const tokenizer = loaded.model
const vocabulary = createStableVocabulary(tokenizer)
const { words } = vocabulary

function randomIndices(random: () => number, length: number): number[] {
  return Array.from({ length }, () => Math.floor(random() * words.length))
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let length = 0
  while (length < a.length && length < b.length && a[length] === b[length]) length++
  return length
}

describe('createStableVocabulary', () => {
  it('is a deterministic list of distinct lower-case words, common ones first', () => {
    expect(words).toHaveLength(2048)
    expect(words.slice(0, 3).map((w) => w.word)).toEqual(['the', 'in', 'to'])
    expect(new Set(words.map((w) => w.id)).size).toBe(words.length)
    expect(createStableVocabulary(tokenizer).words).toEqual(words)
    for (const { word, id, initialId } of words) {
      expect(word).toMatch(/^[a-z]{2,12}$/)
      expect(tokenizer.decode([id])).toBe(` ${word}`)
      expect(tokenizer.decode([initialId])).toBe(word)
    }
    expect(() => createStableVocabulary(tokenizer, { size: 100_000 })).toThrow(
      /only \d+ stable words/,
    )
    expect(createStableVocabulary(tokenizer, { size: 3 }).words).toEqual(words.slice(0, 3))
    expect(() => createStableVocabulary(tokenizer, { size: 0 })).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: 'stable vocabulary: size must be a positive integer',
      }),
    )
  })

  it('round-trips any sequence: encode(decode(ids)) gives the ids back', () => {
    const random = seededRandom(42)
    for (let i = 0; i < 1000; i++) {
      const indices = randomIndices(random, 1 + Math.floor(random() * 60))
      const output = vocabulary.toOutputIds(indices)
      expect(tokenizer.encode(tokenizer.decode(output))).toEqual(output)
      // Words with a leading space everywhere round-trip as well.
      const spaced = indices.map((index) => words[index]?.id as number)
      expect(tokenizer.encode(tokenizer.decode(spaced))).toEqual(spaced)
    }
    expect(tokenizer.decode(vocabulary.toOutputIds([0, 1, 2]))).toBe('the in to')
  })

  it('comes back in the next turn right after the previous prompt', () => {
    const random = seededRandom(1)
    const imEnd = tokenizer.eosTokenId
    const [newline] = tokenizer.encode('\n')
    for (let i = 0; i < 200; i++) {
      const history = [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: `Question ${i}?` },
      ] as const
      const previous = tokenizer.applyChatTemplate([...history]).tokenIds
      // The model's output: stable words, then the EOS it stops on.
      const output = [...vocabulary.toOutputIds(randomIndices(random, 1 + (i % 40))), imEnd]
      const reply = tokenizer.decode(output, { skipSpecialTokens: true })
      const next = tokenizer.applyChatTemplate([
        ...history,
        { role: 'assistant', content: reply },
        { role: 'user', content: 'And then?' },
      ]).tokenIds
      const expectedPrefix = [...previous, ...output, newline]
      expect(next.slice(0, expectedPrefix.length)).toEqual(expectedPrefix)
    }
  })

  it('loses the output when thinking is off: the empty think block is not in history', () => {
    const off = { chatTemplateKwargs: { enable_thinking: false } }
    const history = [{ role: 'user', content: 'Hi' }] as const
    const previous = tokenizer.applyChatTemplate([...history], off).tokenIds
    const output = vocabulary.toOutputIds([0, 1, 2])
    const next = tokenizer.applyChatTemplate(
      [
        ...history,
        { role: 'assistant', content: tokenizer.decode(output) },
        { role: 'user', content: 'Ok' },
      ],
      off,
    ).tokenIds
    // previous ends with <think> "\n\n" </think> "\n\n" after "<|im_start|>assistant\n".
    expect(tokenizer.decode(previous.slice(-4))).toBe('<think>\n\n</think>\n\n')
    expect(commonPrefix(previous, next)).toBe(previous.length - 4)
  })
})
