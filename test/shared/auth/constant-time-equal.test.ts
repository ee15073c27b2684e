import { describe, expect, it } from 'vitest'
import { constantTimeEqual } from '../../../shared/auth/constant-time-equal.ts'

describe('constantTimeEqual', () => {
  it('is string equality, lengths included', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true)
    expect(constantTimeEqual('', '')).toBe(true)
    expect(constantTimeEqual('abc', 'abd')).toBe(false)
    expect(constantTimeEqual('xbc', 'abc')).toBe(false)
    expect(constantTimeEqual('abc', 'abcd')).toBe(false)
    expect(constantTimeEqual('abcd', 'abc')).toBe(false)
    expect(constantTimeEqual('', 'a')).toBe(false)
    // A NUL beyond the shorter string's end must not make them equal.
    expect(constantTimeEqual('a', 'a\u0000')).toBe(false)
  })
})
