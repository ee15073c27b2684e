import { describe, expect, it } from 'vitest'
import { ReplayGuard } from '../../../../control-plane/scorer/http/replay-guard.ts'

describe('ReplayGuard', () => {
  it('refuses a nonce it has seen, until the signature would have expired anyway', () => {
    const guard = new ReplayGuard()
    expect(guard.admit('a', 130, 100)).toBe('admitted')
    expect(guard.admit('a', 131, 101)).toBe('replayed')
    expect(guard.admit('b', 131, 101)).toBe('admitted')
    // Past a's expiry its signature is refused for its timestamp: the nonce can go.
    expect(guard.admit('c', 170, 140)).toBe('admitted')
    expect(guard.size).toBe(1)
    expect(guard.admit('a', 171, 141)).toBe('admitted')
  })

  it('refuses new requests at its bound rather than forgetting nonces early', () => {
    const guard = new ReplayGuard(2)
    guard.admit('a', 130, 100)
    guard.admit('b', 130, 100)
    expect(guard.admit('c', 130, 100)).toBe('full')
    expect(guard.admit('a', 130, 100)).toBe('replayed')
    expect(guard.admit('c', 200, 131)).toBe('admitted')
  })
})
