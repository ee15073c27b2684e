import { describe, expect, it } from 'vitest'
import {
  compileCustomPatterns,
  customPatternProblem,
  detectCustom,
} from '../../../shared/pii/custom-pii-patterns.ts'

describe('custom PII patterns', () => {
  it('compiles and finds every match', () => {
    const [pattern] = compileCustomPatterns([
      { name: 'employee-id', regex: '\\bEMP-\\d{6}\\b', label: 'pii:employee-id' },
    ])
    if (pattern === undefined) throw new Error('no pattern')
    const text = 'EMP-123456 and EMP-654321, not EMP-12345'
    expect(detectCustom(text, pattern)).toEqual([
      { type: 'pii:employee-id', start: 0, end: 10 },
      { type: 'pii:employee-id', start: 15, end: 25 },
    ])
    // Compiled once, scanned many times: no state leaks between texts.
    expect(detectCustom(text, pattern)).toHaveLength(2)
  })

  it('steps over empty matches instead of looping', () => {
    const [pattern] = compileCustomPatterns([{ name: 'p', regex: 'x*', label: 'pii:x' }])
    if (pattern === undefined) throw new Error('no pattern')
    expect(detectCustom('ab😀xxc', pattern)).toEqual([{ type: 'pii:x', start: 4, end: 6 }])
  })

  it.each([
    ['(', /not a regular expression the linear-time matcher/],
    ['\\p{Letter', /linear-time matcher/],
    ['(\\d)\\1', /linear-time matcher.*invalid escape/], // backreference
    ['(?=a)b', /linear-time matcher.*Perl syntax/], // lookahead
    ['(?<=a)b', /linear-time matcher/], // lookbehind
    ['(?!a)b', /linear-time matcher/],
    ['\\w{1000}', /more than 1000/],
    ['x'.repeat(513), /at most 512/],
  ])('refuses %s', (regex, message) => {
    expect(customPatternProblem(regex)).toMatch(message)
    expect(() => compileCustomPatterns([{ name: 'p', regex, label: 'pii:x' }])).toThrow(message)
  })

  it.each([
    '(\\d{3}-)?\\d{4}',
    '(\\d{4} ){3}\\d{4}',
    '[(+*]+\\d',
    '\\(a+\\)+',
    '(?:ab|cd)+',
    '(a+)+', // safe now: the matcher does not backtrack
    '(?i)emp-\\d+',
    '\\x{1F600}',
  ])('accepts %s', (regex) => {
    expect(customPatternProblem(regex)).toBeNull()
  })

  it('finds the same spans as a JavaScript RegExp for ordinary patterns', () => {
    const text = 'Ref EMP-123456, é-mail x@y.z, 😀😀 ticket #A-77 and EMP-654321; PRN-1234567.'
    const patterns = [
      '\\bEMP-\\d{6}\\b',
      '[\\p{L}]+',
      '😀+',
      '#[A-Z]-\\d+',
      '\\bPRN-\\d{7}\\b',
      '(?:EMP|PRN)-\\d+',
      '\\w+@\\w+\\.\\w+',
    ]
    for (const regex of patterns) {
      const [pattern] = compileCustomPatterns([{ name: 'p', regex, label: 'pii:x' }])
      if (pattern === undefined) throw new Error('no pattern')
      const expected = [...text.matchAll(new RegExp(regex, 'gu'))].map((m) => ({
        type: 'pii:x',
        start: m.index,
        end: m.index + m[0].length,
      }))
      expect(detectCustom(text, pattern), regex).toEqual(expected)
    }
  })

  // A backtracking matcher takes exponential (or high-polynomial) time on these; a hang
  // would time the test out.
  it.each([
    ['(a|a)*b', 'a'.repeat(30_000), 'b'],
    ['(a|aa)*c', 'a'.repeat(30_000), 'c'],
    ['(a+)+b', 'a'.repeat(30_000), 'b'],
    ['(\\w*)*x', 'a'.repeat(30_000), 'x'],
    ['\\w*\\w*\\w*x', 'a'.repeat(30_000), 'x'],
    ['.*a.*b.*c', 'ab'.repeat(15_000), 'c'],
    ['(x+x+)+y', 'x'.repeat(30_000), 'y'],
    ['(([a-z])+.)+[A-Z]([a-z])+!', 'abcdefghij'.repeat(3_000), 'Ab!'],
    ['(\\d+-?)+\\.', '1-'.repeat(15_000), '1.'],
  ])('completes %s on a crafted prompt', (regex, text, completing) => {
    const [pattern] = compileCustomPatterns([{ name: 'p', regex, label: 'pii:x' }])
    if (pattern === undefined) throw new Error('no pattern')
    expect(detectCustom(text, pattern)).toEqual([])
    expect(detectCustom(text + completing, pattern).length).toBeGreaterThan(0)
  })

  it('reports a few matches of an unbounded pattern, many of a bounded one', () => {
    // `.*x|a` rescans the rest of the text for every further match: capped at 16.
    const [unbounded, bounded] = compileCustomPatterns([
      { name: 'u', regex: '.*x|a', label: 'pii:x' },
      { name: 'b', regex: 'a', label: 'pii:x' },
    ])
    if (unbounded === undefined || bounded === undefined) throw new Error('no pattern')
    const text = 'a'.repeat(200_000)
    expect(detectCustom(text, unbounded)).toHaveLength(16)
    expect(detectCustom(text, bounded)).toHaveLength(1_000)
  })

  it('refuses a label that is not a request label, and too many patterns', () => {
    expect(() => compileCustomPatterns([{ name: 'p', regex: 'a', label: 'PII Card' }])).toThrow(
      /not a request label/,
    )
    const many = Array.from({ length: 17 }, (_, i) => ({ name: `p${i}`, regex: 'a', label: 'x' }))
    expect(() => compileCustomPatterns(many)).toThrow(/at most 16/)
  })
})
