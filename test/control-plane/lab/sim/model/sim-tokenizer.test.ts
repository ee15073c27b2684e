import { readFileSync } from 'node:fs'
import { Tokenizer } from '@huggingface/tokenizers'
import { describe, expect, it } from 'vitest'
import { createSimTokenizer } from '../../../../../control-plane/lab/sim/model/create-sim-tokenizer.ts'
import {
  builtinModelNames,
  loadModelFiles,
} from '../../../../../control-plane/lab/sim/model/load-model-files.ts'
import { createAddedTokenSplitter } from '../../../../../control-plane/lab/sim/model/split-at-added-tokens.ts'
import { createSeededRandom } from '../../../../../shared/random/create-seeded-random.ts'

const pieces = [
  'Hello',
  ' world',
  '\n\n',
  '  ',
  '\t',
  '123456',
  'é',
  '😀',
  '你好',
  ' the',
  "'s",
  '\u3000',
  '<',
  '|',
]

describe('the simulated pod’s tokenizer', () => {
  it.each(builtinModelNames)('%s: run by run with its cache, the ids of the whole text', (name) => {
    const files = loadModelFiles(name)
    if (!files.ok) throw files.error
    const tokenizer = createSimTokenizer(files.files)
    const whole = new Tokenizer(files.files.tokenizerJson, files.files.tokenizerConfig)
    const added = [...whole.get_added_tokens_decoder().values()].map((t) => t.content).slice(0, 40)
    const random = createSeededRandom(7)
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T
    for (let i = 0; i < 300; i++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () =>
        random() < 0.3 ? pick(added) : pick(pieces),
      ).join('')
      expect(tokenizer.encode(text), JSON.stringify(text)).toEqual(
        whole.encode(text, { add_special_tokens: false }).ids,
      )
    }
    // Natural text, where runs are cut into words (GPT-style pre-tokenizers), twice: the
    // second time from the cache.
    const prose = readFileSync('README.md', 'utf8')
    for (let i = 0; i < 100; i++) {
      const at = Math.floor(random() * prose.length)
      const text = prose.slice(at, at + Math.floor(random() * 2000))
      const expected = whole.encode(text, { add_special_tokens: false }).ids
      expect(tokenizer.encode(text)).toEqual(expected)
      expect(tokenizer.encode(text)).toEqual(expected)
    }
    // A conversation's earlier turns come back in every request: their runs are cached.
    const before = tokenizer.segmentCacheStats()
    tokenizer.encode(`${added[0]}A long system prompt that every turn repeats.${added[1]}`)
    tokenizer.encode(
      `${added[0]}A long system prompt that every turn repeats.${added[1]} And more.`,
    )
    expect(tokenizer.segmentCacheStats().hits).toBeGreaterThan(before.hits)
  })

  it('adds special tokens as transformers does when asked (a Llama-class BOS from the config)', () => {
    const ids = (name: string) => {
      const files = loadModelFiles(name)
      if (!files.ok) throw files.error
      const tokenizer = createSimTokenizer(files.files)
      return {
        tokenizer,
        with: tokenizer.encode('hi', { addSpecialTokens: true }),
        without: tokenizer.encode('hi'),
      }
    }
    for (const name of ['llama3.1', 'gemma3', 'deepseek-v3']) {
      const { tokenizer, with: withBos, without } = ids(name)
      expect(withBos.slice(1), name).toEqual(without)
      expect(tokenizer.decode(withBos.slice(0, 1)), name).toBe(tokenizer.specialTokens.bos_token)
    }
    for (const name of ['qwen3', 'gpt-oss']) expect(ids(name).with, name).toEqual(ids(name).without)
  })

  it('cuts text at added tokens, leftmost first and longest there', () => {
    const split = createAddedTokenSplitter(['<a>', '<a><b>', 'b>', '😀x'])
    expect(split('x<a><b>y<a>b>😀x😀')).toEqual([
      { added: false, text: 'x' },
      { added: true, text: '<a><b>' },
      { added: false, text: 'y' },
      { added: true, text: '<a>' },
      { added: true, text: 'b>' },
      { added: true, text: '😀x' },
      { added: false, text: '😀' },
    ])
  })

  it('tokenizes whole texts where a prefix depends on the section (Metaspace, first only)', () => {
    const files = loadModelFiles('qwen3')
    if (!files.ok) throw files.error
    const tokenizerJson = {
      version: '1.0',
      added_tokens: [
        {
          id: 3,
          content: '<s>',
          special: true,
          normalized: false,
          lstrip: false,
          rstrip: false,
          single_word: false,
        },
      ],
      normalizer: null,
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true },
      post_processor: null,
      decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true },
      model: {
        type: 'WordLevel',
        vocab: { '<unk>': 0, '▁a': 1, a: 2, '<s>': 3 },
        unk_token: '<unk>',
      },
    }
    const tokenizer = createSimTokenizer({
      ...files.files,
      tokenizerJson,
      tokenizerConfig: { eos_token: '<s>' },
    })
    const whole = new Tokenizer(tokenizerJson, {})
    for (const text of ['a<s>a', '<s>a', 'a a<s>a'])
      expect(tokenizer.encode(text), text).toEqual(
        whole.encode(text, { add_special_tokens: false }).ids,
      )
    expect(tokenizer.segmentCacheStats().misses).toBe(0)
  })
})
