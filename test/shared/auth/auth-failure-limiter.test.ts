import { describe, expect, it } from 'vitest'
import { AuthFailureLimiter } from '../../../shared/auth/auth-failure-limiter.ts'

describe('AuthFailureLimiter', () => {
  const limiter = () => new AuthFailureLimiter({ maxFailures: 3, windowMs: 60_000, maxTracked: 2 })

  it('refuses a source past its failures until its window ends', () => {
    const l = limiter()
    expect(l.failed('a', 0)).toBe(null)
    expect(l.failed('a', 1_000)).toBe(null)
    expect(l.failed('a', 2_000)).toBe(58)
    expect(l.blocked('a', 30_000)).toBe(30)
    expect(l.blocked('b', 30_000)).toBe(null)
    expect(l.blocked('a', 60_000)).toBe(null)
    expect(l.failed('a', 60_000)).toBe(null)
  })

  it('forgets the oldest source past its bound', () => {
    const l = limiter()
    for (const source of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) l.failed(source, i)
    expect(l.blocked('a', 10)).toBe(null)
    expect(l.blocked('b', 10)).not.toBe(null)
    expect(l.blocked('c', 10)).not.toBe(null)
  })
})
