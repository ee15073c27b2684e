import { describe, expect, it } from 'vitest'
import { toOnigurumaRegExp } from '../../../control-plane/tokenizer/to-oniguruma-regexp.ts'

describe('toOnigurumaRegExp', () => {
  it('matches whitespace as Oniguruma does: U+0085 yes, U+FEFF no', () => {
    const whitespace = toOnigurumaRegExp('\\s+')
    expect('a\u0085\u3000b'.match(whitespace)).toEqual(['\u0085\u3000'])
    expect('a\ufeffb'.match(whitespace)).toBeNull()
  })

  it('rewrites \\s inside classes and \\S in lookaheads', () => {
    const words = toOnigurumaRegExp('[^\\s\\p{L}]+|\\s+(?!\\S)|\\s+|\\p{L}+')
    expect('ab\ufeff!  \u0085c'.match(words)).toEqual(['ab', '\ufeff!', '  ', '\u0085', 'c'])
    expect(toOnigurumaRegExp('a\\[s]').test('a[s]')).toBe(true)
  })

  it('keeps the case-insensitive group of the Qwen pattern', () => {
    const contractions = toOnigurumaRegExp("(?i:'s|'ll)")
    expect("it'S we'LL".match(contractions)).toEqual(["'S", "'LL"])
  })
})
