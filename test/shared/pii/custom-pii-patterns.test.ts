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
    ['(', /not a valid JavaScript regular expression/],
    ['\\p{Letter', /not a valid/], // only an error with the u flag
    ['(a+)+', /must not repeat a group/],
    ['(\\d*-)*', /must not repeat a group/],
    ['(?:[a-z]+\\s?){2,}', /must not repeat a group/],
    ['x'.repeat(513), /at most 512/],
  ])('refuses %s', (regex, message) => {
    expect(customPatternProblem(regex)).toMatch(message)
    expect(() => compileCustomPatterns([{ name: 'p', regex, label: 'pii:x' }])).toThrow(message)
  })

  it.each(['(\\d{3}-)?\\d{4}', '(\\d{4} ){3}\\d{4}', '[(+*]+\\d', '\\(a+\\)+', '(?:ab|cd)+'])(
    'accepts %s',
    (regex) => {
      expect(customPatternProblem(regex)).toBeNull()
    },
  )

  it('refuses a label that is not a request label, and too many patterns', () => {
    expect(() => compileCustomPatterns([{ name: 'p', regex: 'a', label: 'PII Card' }])).toThrow(
      /not a request label/,
    )
    const many = Array.from({ length: 17 }, (_, i) => ({ name: `p${i}`, regex: 'a', label: 'x' }))
    expect(() => compileCustomPatterns(many)).toThrow(/at most 16/)
  })
})
